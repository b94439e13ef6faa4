// examples/vision.ts runs offline: images in a user message and in a tool result go over the
// Chat Completions wire as the example checks, and through mockModel into the transcript.
import { describe, expect, it } from 'vitest';
import { runExample } from '../support/examples.js';

describe('examples/vision.ts', () => {
  it('sends both images over the wire as checked, and keeps the parts in the mockModel transcript', async () => {
    const { code, stdout, stderr } = await runExample('examples/vision.ts');
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toMatch(/OpenAI-compatible provider \(a scripted server at http:\/\/127\.0\.0\.1:\d+\/v1\):/);
    expect(stdout).toContain('checked: the user image went as an image_url data URL');
    expect(stdout).toContain('checked: the tool result went as text in the tool message');
    expect(stdout).toContain('checked: the chart image followed it in a user message');
    expect(stdout).toContain('  user: text "Count the bars in this photo and chart them." + image (image/png)');
    expect(stdout).toContain('  tool: text "Bar chart of 3, 5, 2" + image (image/png)');
    expect(stdout).toContain('checked: the run state holds the chart as base64');
  });
});
