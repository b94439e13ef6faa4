import type { Logger } from '../vocabulary/contexts.js';
import type { AgentEvent, EmittedEvent, EventListener, PermissionListener, PermissionRecord } from '../vocabulary/events.js';
import { copyJson } from '../vocabulary/json.js';

/**
 * Where a segment's events and permission records go: its listeners. One that throws or
 * rejects is logged, and the run goes on. With nobody listening, publishing costs nothing.
 *
 * @example const bus = new EventBus(runId, [console.log], [], undefined, console); bus.publish({ type: 'model.start', step: 1, purpose: 'turn' });
 */
export class EventBus {
  readonly listening: boolean;

  constructor(
    private readonly runId: string,
    private readonly listeners: readonly EventListener[],
    private readonly permissionListeners: readonly PermissionListener[],
    /** Agent names from the lead down, inside a sub-agent: its events and records carry them. */
    private readonly path: string[] | undefined,
    private readonly logger: Logger,
  ) {
    this.listening = listeners.length > 0;
  }

  /** Send an event to every listener. */
  publish(event: EmittedEvent | Omit<AgentEvent, 'runId' | 'at'>): void {
    if (!this.listening) return;
    const full = { ...event, runId: this.runId, at: Date.now() } as AgentEvent;
    if (this.path !== undefined && full.agentPath === undefined) full.agentPath = this.path;
    for (const listener of this.listeners) this.#notify(() => listener(full), `an event listener threw on ${full.type}`);
  }

  /** Tell the permission listeners and the event listeners about one decision. */
  permission(call: Pick<PermissionRecord, 'toolName' | 'toolCallId' | 'args'>, fields: Pick<PermissionRecord, 'decision' | 'source' | 'rule' | 'hook' | 'reason'>): void {
    const listeners = this.permissionListeners;
    if (listeners.length === 0 && !this.listening) return;
    // A copy: a listener must not be able to change the arguments of the call it is told about.
    const record: PermissionRecord = { toolName: call.toolName, toolCallId: call.toolCallId, args: copyJson(call.args), ...fields };
    if (this.path !== undefined) record.agentPath = this.path;
    for (const listener of listeners) this.#notify(() => listener(record), 'onPermissionDecision threw');
    this.publish({ type: 'permission.decision', ...record });
  }

  #notify(call: () => unknown, what: string): void {
    try {
      const returned = call();
      // An async listener's rejection is logged too: unhandled, it would end the process.
      if (typeof (returned as PromiseLike<unknown> | undefined)?.then === 'function') {
        Promise.resolve(returned).catch((error: unknown) => this.logger.warn(`koagent: ${what}; the run goes on`, error));
      }
    } catch (error) {
      this.logger.warn(`koagent: ${what}; the run goes on`, error);
    }
  }
}
