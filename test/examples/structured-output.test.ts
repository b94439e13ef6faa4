// examples/structured-output.ts runs offline and prints a typed answer reached after one repair turn.
import { describe, expect, it } from 'vitest';
import { runExample } from '../support/examples.js';

describe('examples/structured-output.ts', () => {
  it('gets a typed object after one repair turn, with the run context reaching the tool and not the state', async () => {
    const { code, stdout, stderr } = await runExample('examples/structured-output.ts');
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toContain('forecast(Oslo) for user ada');
    expect(stdout).toContain('repair turns: 1');
    expect(stdout).toContain('the model was told: The reply is not JSON.');
    expect(stdout).toContain('output: Oslo, 3°C, advice: umbrella');
    expect(stdout).toContain('model calls: 3; asked for JSON: true');
    expect(stdout).toContain('the state holds the context: false');
  });
});
