// MCP content and koagent's parts, both ways: what a tool message's content becomes for an MCP client, and what a server's blocks become for the model.
import { describe, expect, it } from 'vitest';
import { mcpContentOf, partsOf } from '../../src/mcp/results.js';

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

describe('content parts made from an MCP server\'s blocks', () => {
  const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
  const pdf = Buffer.from('%PDF-1.4\n').toString('base64');

  it('label data with the type its bytes have when the server\'s mimeType says another (koagent refuses a label that lies), and keep it when the bytes say nothing', () => {
    expect(partsOf([
      { type: 'image', data: png, mimeType: 'image/jpeg' },
      { type: 'image', data: pdf, mimeType: 'image/png' },
      { type: 'image', data: 'aGVsbG8=', mimeType: 'image/avif' },
      { type: 'resource', resource: { uri: 'file:///r/report', mimeType: 'image/png', blob: pdf } },
    ])).toEqual([
      { type: 'image', image: png, mediaType: 'image/png' },
      { type: 'file', data: pdf, mediaType: 'application/pdf' },
      { type: 'image', image: 'aGVsbG8=', mediaType: 'image/avif' },
      { type: 'file', data: pdf, mediaType: 'application/pdf', filename: 'report' },
    ]);
  });
});
