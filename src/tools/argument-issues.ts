import type { Tool } from '../core/vocabulary/contexts.js';

/**
 * Why `args` do not fit `tool`'s schema, one `path: message` line an issue (empty when they fit):
 * how the studio and the CLI refuse arguments a person edited, before anything resumes.
 *
 * @example argumentIssues(tool, { amount: 'ten' }) // ['amount: Invalid input: expected number, received string']
 */
export function argumentIssues(tool: Pick<Tool, 'input'>, args: unknown): string[] {
  const checked = tool.input.safeParse(args);
  return checked.success ? [] : checked.error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(arguments)'}: ${issue.message}`);
}
