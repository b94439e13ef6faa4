import { checkedArgs, ToolCall } from './tool-call.js';
import { CallContext, segmentOf } from './base-context.js';
import type { ModelContext, SideRequest } from '../vocabulary/contexts.js';
import { KoagentError, markProviderError } from '../vocabulary/errors.js';
import { contentProblem } from '../vocabulary/content.js';
import { assistantProblem, messageProblem, type AssistantMessage, type AssistantToolCall, type Message } from '../vocabulary/messages.js';
import { isModelProvider, type GenerateOptions, type GenerateResult, type ModelProvider } from '../vocabulary/model.js';
import { copyPlain } from '../vocabulary/json.js';
import { plainValue } from '../state/transcript-view.js';
import { endRun } from './run-context.js';
import type { ProviderCall } from './agent-core.js';
import type { Segment } from './segment.js';
import type { EndReason } from '../vocabulary/state.js';

const NO_USAGE = Object.freeze({ inputTokens: 0, outputTokens: 0 });

/** The context of one model call (a turn of the loop). */
export class ModelCallContext extends CallContext implements ModelContext {
  /** The reply this call has in the transcript, so a retry or a replacement takes its place. */
  #reply: AssistantMessage | undefined;
  /** The stack is done: a provider call still running (an orphaned `next()`) must not touch the run. */
  #closed = false;

  /** The model the terminal asks: the agent's, unless a layer set another. */
  provider: ModelProvider;

  constructor(segment: Segment, public request: GenerateOptions, readonly step: number, readonly purpose: string) {
    super(segment);
    this.provider = segment.agent.provider;
  }

  get reply(): AssistantMessage | undefined {
    return this.#reply;
  }

  get ended(): boolean {
    return segmentOf(this).end.requested !== undefined;
  }

  end(output?: unknown, reason?: EndReason): GenerateResult {
    endRun(segmentOf(this), output, reason);
    return { message: { role: 'assistant', content: '' }, usage: { ...NO_USAGE }, finishReason: 'hook_end' };
  }

  generate(request: SideRequest, purpose: string): Promise<GenerateResult> {
    return sideCall(segmentOf(this), request, purpose);
  }

  setReply(message: AssistantMessage): void {
    const problem = assistantProblem(message, 'message');
    if (problem !== undefined) throw new TypeError(problem);
    this.#reply = segmentOf(this).writer.placeReply(this.#reply, plainValue(message));
  }

  setMessages(messages: readonly Message[]): void {
    if (!Array.isArray(messages)) throw new TypeError('messages must be an array of messages (the whole transcript to send and keep)');
    for (let i = 0; i < messages.length; i++) {
      const problem = messageProblem(messages[i], `messages[${i}]`);
      if (problem !== undefined) throw new TypeError(problem);
    }
    segmentOf(this).writer.setMessages(messages);
  }

  /**
   * The terminal of the `model` stack: ask the agent's model, and put its reply in the
   * transcript. Not async: the provider call's own promise is what the layers await.
   */
  static terminal(ctx: ModelContext): Promise<GenerateResult> {
    const call = ctx as ModelCallContext;
    const segment = segmentOf(call);
    // A retry asks again from the same transcript: the earlier attempt's reply leaves it first.
    segment.writer.withdrawReply(call.#reply);
    call.#reply = undefined;
    const { provider } = call;
    if (!isModelProvider(provider)) return Promise.reject(new TypeError('ctx.provider must be a model provider (an object with generate(request)); a layer set it to something else'));
    return callProvider(segment, providerCall(segment, provider, forProvider(call.request), call.purpose, call));
  }

  /** Whether the turn's stack is still running (a provider call that ends after it changes nothing). */
  static open(turn: ModelContext): boolean {
    return !(turn as ModelCallContext).#closed;
  }

  /** A turn's provider call came back: count it and place its reply, unless the stack is done already. */
  static replied(turn: ModelContext, result: GenerateResult): void {
    const call = turn as ModelCallContext;
    // A reply that arrives after its turn was given up (an orphaned next()) changes nothing.
    if (call.#closed) return;
    const { writer } = segmentOf(call);
    writer.countModelCall(result.usage);
    call.#reply = writer.placeReply(call.#reply, result.message);
  }

  /**
   * The `model` stack is done: keep the reply its outermost layer returned, each tool call's
   * arguments checked against the bounds once, here. Returns its tool calls as the records
   * the turn that follows settles.
   */
  static keep(call: ModelCallContext, result: GenerateResult): ToolCall[] {
    call.#closed = true;
    const segment = segmentOf(call);
    let kept = result.message;
    const checked: (Record<string, unknown> | string)[] = [];
    // A layer that ended the run without calling the model leaves no reply behind.
    if (segment.end.requested === undefined || call.#reply !== undefined) {
      const bounds = segment.agent.argumentBounds;
      kept = segment.writer.keepReply(call.#reply, result.message, (raw) => {
        const { kept: inTranscript, args } = checkedArgs(raw, bounds);
        checked.push(args);
        return inTranscript;
      });
      call.#reply = kept;
    }
    if (!segment.bus.listening) return (kept.toolCalls ?? []).map((written, i) => new ToolCall(segment, written, checked[i]));
    segment.bus.publish({ type: 'model.done', step: call.step, purpose: 'turn', message: kept, usage: result.usage, finishReason: result.finishReason });
    // A listener was handed the kept reply and may have changed it: its calls are checked as it is now.
    return (kept.toolCalls ?? []).map((written) => new ToolCall(segment, written));
  }

  /** The `model` stack failed: the call leaves no reply in the transcript. */
  static drop(call: ModelCallContext): void {
    call.#closed = true;
    segmentOf(call).writer.withdrawReply(call.#reply);
    call.#reply = undefined;
  }

}

/**
 * Start one model turn: count the step and build the call's context, whose request holds the
 * agent's model settings, the live transcript (not a copy), the tool specs and the run's signal.
 */
export function modelTurn(segment: Segment): ModelCallContext {
  const step = segment.writer.nextStep();
  // Every request is the run's own, all the way down: a layer that sets a header changes no
  // other run.
  const request: GenerateOptions = {
    ...copyPlain(segment.agent.modelSettings),
    messages: segment.views.transcript,
    tools: segment.agent.toolSpecs.slice(),
    signal: segment.base.signal,
  };
  const call = new ModelCallContext(segment, request, step, 'turn');
  if (segment.bus.listening) segment.bus.publish({ type: 'model.start', step, purpose: 'turn' });
  return call;
}

/**
 * One call of a provider, for a turn or a side call: through the `provider` stack (with the
 * layers of the segment's mode), checked, and counted in the run's usage (a turn's reply also placed in the
 * transcript). What it throws is the provider's.
 */
async function callProvider(segment: Segment, call: ProviderCall): Promise<GenerateResult> {
  const { provider, request } = call;
  let result: GenerateResult;
  try {
    result = await segment.stacks.provider(call);
    // A reply that arrives after its call was given up (a timeout) must not enter the transcript.
    // The segment's own signal (the usual case) is read through the segment's abort flag, set
    // with it, so a step asks Node's signal nothing; a layer's own signal is asked.
    const signal = request.signal;
    if (signal === segment.base.signal) {
      if (segment.cancel.aborted) throw signal.reason;
    } else signal?.throwIfAborted();
    checkReply(result, provider);
  } catch (error) {
    // A failed attempt was a call too (a retry layer's attempts count toward limits.modelCalls).
    if (call.turn === undefined || ModelCallContext.open(call.turn)) segment.writer.countModelCall(undefined);
    throw markProviderError(error, providerName(provider));
  }
  if (call.turn === undefined) segment.writer.countModelCall(result.usage);
  else ModelCallContext.replied(call.turn, result);
  return result;
}

/** The provider stack's context for one call: what its features see, and no more. */
function providerCall(segment: Segment, provider: ModelProvider, request: GenerateOptions, purpose: string, turn: ModelContext | undefined): ProviderCall {
  const call = { provider, request, purpose, turn, runVar: segment.runVar };
  const { emit } = segment.base;
  return emit === undefined ? call : { ...call, emit };
}

/**
 * The request as a provider gets it: the messages themselves, not the layers' view of them
 * (a provider may copy or serialise them however it likes).
 */
function forProvider(request: GenerateOptions): GenerateOptions {
  const messages = plainValue(request.messages);
  return messages === request.messages ? request : Object.assign({}, request, { messages });
}

/** The terminal of the `provider` stack: the provider's own `generate`, whose errors are the provider's. */
export function generateReply(call: ProviderCall): Promise<GenerateResult> {
  const { provider } = call;
  const fromProvider = (error: unknown) => Promise.reject(markProviderError(error, providerName(provider)));
  try {
    return Promise.resolve(provider.generate(call.request)).catch(fromProvider);
  } catch (error) {
    return fromProvider(error);
  }
}

/** A side model call (`ctx.generate` of a model or tool context): straight to a provider, counted in the run's usage. */
export async function sideCall(segment: Segment, request: SideRequest, purpose: string): Promise<GenerateResult> {
  if (typeof request !== 'object' || request === null || !Array.isArray(request.messages)) throw new TypeError('ctx.generate(request, purpose): request.messages must be an array of messages');
  const { provider, ...rest } = request;
  const model = provider ?? segment.agent.provider;
  if (!isModelProvider(model)) throw new TypeError('ctx.generate(request, purpose): request.provider must be a model provider (an object with generate), or left out for the agent\'s model');
  if (typeof purpose !== 'string' || purpose === '') throw new TypeError('ctx.generate(request, purpose): purpose must name what the call is for, e.g. \'compaction\' (it tags its span and events)');
  const step = segment.state.steps;
  if (segment.bus.listening) segment.bus.publish({ type: 'model.start', step, purpose });
  const result = await callProvider(segment, providerCall(segment, model, forProvider(Object.assign({ tools: [], signal: segment.base.signal }, rest)), purpose, undefined));
  if (segment.bus.listening) segment.bus.publish({ type: 'model.done', step, purpose, message: result.message, usage: result.usage, finishReason: result.finishReason });
  return result;
}

/** A provider's reply, checked: anything else is an `invalid_reply` naming the provider. */
function checkReply(result: GenerateResult, provider: ModelProvider): void {
  const problem = replyProblem(result);
  if (problem !== undefined) {
    throw new KoagentError('invalid_reply', `The model provider ${providerName(provider)} returned ${problem}; generate() must resolve to { message: { role: 'assistant', content, toolCalls? }, usage, finishReason }`);
  }
}

/**
 * What is wrong with a reply (a provider's, or a model layer's), or undefined. Content that is
 * null or missing counts as empty text; tool calls need a name (ids are given when missing).
 */
export function replyProblem(result: GenerateResult): string | undefined {
  if (typeof result !== 'object' || result === null) return String(result);
  const message = result.message as Partial<AssistantMessage> | undefined;
  if (typeof message !== 'object' || message === null || message.role !== 'assistant') return 'no assistant message';
  if (typeof message.content !== 'string') {
    if (message.content == null) message.content = '';
    else if (!Array.isArray(message.content)) return 'a message whose content is neither text nor a list of parts';
    else {
      const problem = contentProblem(message.content, 'assistant', 'message.content');
      if (problem !== undefined) return `a message whose ${problem}`;
    }
  }
  const calls = message.toolCalls;
  if (calls === undefined) return undefined;
  if (!Array.isArray(calls)) return 'toolCalls that are not a list of { id, name, args }';
  for (const call of calls) {
    if (typeof call !== 'object' || call === null || typeof call.name !== 'string') return 'toolCalls that are not a list of { id, name, args }';
  }
  return undefined;
}

/** How errors name a provider: its `name`, its model id, its class, or "(unnamed)". */
export function providerName(provider: ModelProvider): string {
  const className = provider.constructor?.name;
  // A plain object's constructor is `Object`, which names nothing.
  return provider.name ?? provider.modelId ?? (className && className !== 'Object' ? className : '(unnamed)');
}
