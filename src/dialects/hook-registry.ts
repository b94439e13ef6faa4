// PLACEHOLDER — being written by the AgentHook helper (issue 4).
import type { AgentHook } from './agent-hook.js';

export class HookRegistry {
  list(): AgentHook[] {
    return [];
  }
}

export function isHookRegistry(value: unknown): value is HookRegistry {
  return value instanceof HookRegistry;
}
