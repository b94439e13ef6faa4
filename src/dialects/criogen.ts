// PLACEHOLDER — being written by the criogen Hook helper (issue 5). Types below are the contract.
import type { Message } from '../messages.js';
import type { NamedMiddleware } from '../stacks.js';

export interface Hook {
  name?: string;
}

export function criogenMiddleware(_hook: Hook, _name: string): NamedMiddleware {
  throw new TypeError('Hook support is being implemented');
}
export type { Message };
