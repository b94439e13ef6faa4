// What the CLI's commands write to, how they read their flags, and how they fail (an error with its exit code).
import { parseArgs } from 'node:util';


/** Where a command writes: its output (stdout) and its complaints (stderr). */
export interface Io {
  out(text: string): void;
  err(text: string): void;
}

/** The exit codes a script can test (docs/cli.md). */
export const EXIT = { ok: 0, failure: 1, usage: 2, notFound: 3, refused: 4 } as const;

/** A command's failure, with the exit code that says what kind it is. */
export class CliError extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

type Spec = Record<string, { type: 'string' | 'boolean' }>;

/** The flags of a command line, by the spec's names: text for string flags, true for boolean ones. */
export type Flags<S extends Spec> = { [K in keyof S]?: S[K] extends { type: 'boolean' } ? boolean : string };

/** `argv` parsed by `spec`: an unknown flag or a missing value is a usage error naming it. */
export function parse<S extends Spec>(argv: readonly string[], spec: S): { values: Flags<S>; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args: [...argv], options: spec, allowPositionals: true, strict: true });
    return { values: values as Flags<S>, positionals };
  } catch (error) {
    throw new CliError(EXIT.usage, (error as Error).message.replace(/^TypeError \[[A-Z_]+\]: /, ''));
  }
}
