// What koagent's tool message content becomes for an MCP client: each part as the block MCP has for it.
import { describe, expect, it } from 'vitest';
import { mcpContentOf } from '../../src/mcp/results.js';

const jpeg = '/9j/4AAQSkZJRgABAQ';

describe('tool message content for an MCP client', () => {
  it('keeps a data URL\'s media type and sends its base64 data alone', () => {
    expect(mcpContentOf([{ type: 'image', image: `data:image/jpeg;base64,${jpeg}` }])).toEqual([{ type: 'image', data: jpeg, mimeType: 'image/jpeg' }]);
  });

  it('reads the media type of an image given without one from its bytes, PNG when they say nothing', () => {
    expect(mcpContentOf([{ type: 'image', image: jpeg }])).toEqual([{ type: 'image', data: jpeg, mimeType: 'image/jpeg' }]);
    expect(mcpContentOf([{ type: 'image', image: 'aGVsbG8=' }])).toEqual([{ type: 'image', data: 'aGVsbG8=', mimeType: 'image/png' }]);
  });

  it('links a part that points at a URL, and passes text as text', () => {
    expect(mcpContentOf([{ type: 'text', text: 'see' }, { type: 'file', data: 'https://x/r.pdf', mediaType: 'application/pdf', filename: 'r.pdf' }])).toEqual([
      { type: 'text', text: 'see' },
      { type: 'resource_link', uri: 'https://x/r.pdf', name: 'r.pdf', mimeType: 'application/pdf' },
    ]);
  });
});
