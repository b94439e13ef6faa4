// examples/structured-output.ts runs offline and prints a typed answer reached after one repair turn.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

describe('examples/structured-output.ts', () => {
  it('gets a typed object after one repair turn, with the run context reaching the tool and not the state', async () => {
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
      execFile(tsx, ['examples/structured-output.ts'], { cwd: root, timeout: 60_000 }, (error, stdout, stderr) => (error ? reject(error) : resolve({ stdout, stderr })));
    });
    expect(stderr).toBe('');
    expect(stdout).toContain('forecast(Oslo) for user ada');
    expect(stdout).toContain('repair turns: 1');
    expect(stdout).toContain('the model was told: The reply is not JSON.');
    expect(stdout).toContain('output: Oslo, 3°C, advice: umbrella');
    expect(stdout).toContain('model calls: 3; asked for JSON: true');
    expect(stdout).toContain('the state holds the context: false');
  });
});
