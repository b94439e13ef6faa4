import type { ModelContext, SubagentInfo } from './context.js';
import type { EmittedEvent } from './events.js';
import { KoagentError, markProviderError } from './errors.js';
import type { AssistantMessage, Message } from './messages.js';
import type { GenerateOptions, GenerateResult, ModelProvider } from './model.js';
import { releaseText, retractText, streamReply } from './model-stream.js';
import { resultContent } from './tools/outcome.js';
import { runOf, type Run } from './run.js';
import { endModelSpan, inSpan, modelSpan } from './tracing.js';
import type { RunState } from './state.js';

const NO_USAGE = Object.freeze({ inputTokens: 0, outputTokens: 0 });

/** The context of one model call. A class, so `end` and `generate` cost nothing per call. */
export class ModelCall implements ModelContext {
  readonly agentId: string;
  readonly agentName: string;
  readonly runId: string;
  readonly sessionId: string;
  readonly messages: Message[];
  readonly metadata: Record<string, unknown>;
  readonly signal: AbortSignal;
  readonly state: RunState;
  declare readonly subagent?: SubagentInfo;
  declare readonly emit?: (event: EmittedEvent) => void;
  /** The reply this call put into the transcript, so a retry or a replacement takes its place. */
  reply?: AssistantMessage;
  /** Text of this call a stream consumer has seen (and not had retracted). */
  streamed = '';
  /** The stack has settled: a provider call still running (an orphaned `next()`) must not touch the run. */
  closed = false;

  constructor(run: Run, public request: GenerateOptions, readonly step: number, readonly purpose: string) {
    const base = run.base;
    this.agentId = base.agentId;
    this.agentName = base.agentName;
    this.runId = base.runId;
    this.sessionId = base.sessionId;
    this.messages = run.state.messages;
    this.metadata = base.metadata;
    this.signal = base.signal;
    this.state = run.state;
    if (base.subagent !== undefined) (this as { subagent?: SubagentInfo }).subagent = base.subagent;
    if (base.emit !== undefined) (this as { emit?: unknown }).emit = base.emit;
    run.bind(this);
  }

  end(output?: unknown): GenerateResult {
    // The output is kept in the run state, which must stay plain JSON.
    if (output !== undefined) {
      try {
        resultContent(output);
      } catch (error) {
        throw new TypeError(`ctx.end(output): the output is kept in the run state, so it must be JSON; ${(error as Error).message.replace('the result is not JSON: ', '')}`);
      }
    }
    runOf(this).end = { output };
    return { message: { role: 'assistant', content: '' }, usage: { ...NO_USAGE }, finishReason: 'hook_end' };
  }

  generate(provider: ModelProvider, request: Partial<GenerateOptions> & Pick<GenerateOptions, 'messages'>, purpose: string): Promise<GenerateResult> {
    return sideCall(runOf(this), provider, request, purpose);
  }

  /** Put `message` into the transcript where this call's reply goes (replacing an earlier one). */
  place(message: AssistantMessage): void {
    const messages = this.messages;
    // Usually it is there already, last (the provider step placed it before the layers returned).
    if (this.reply === message && messages[messages.length - 1] === message) return;
    const at = this.reply === undefined ? -1 : messages.lastIndexOf(this.reply);
    if (at === -1) messages.push(message);
    else messages[at] = message;
    this.reply = message;
  }

  /** Take this call's reply out of the transcript again (the call failed). */
  withdraw(): void {
    const at = this.reply === undefined ? -1 : this.messages.lastIndexOf(this.reply);
    if (at !== -1) this.messages.splice(at, 1);
    this.reply = undefined;
  }
}

/** A provider's reply, checked: anything else is an `invalid_reply` naming the provider. */
function checkReply(result: GenerateResult, provider: ModelProvider): void {
  const problem = replyProblem(result);
  if (problem !== undefined) {
    throw new KoagentError('invalid_reply', `The model provider ${providerName(provider)} returned ${problem}; generate() must resolve to { message: { role: 'assistant', content, toolCalls? }, usage, finishReason }`);
  }
}

function replyProblem(result: GenerateResult): string | undefined {
  if (typeof result !== 'object' || result === null) return String(result);
  const message = result.message as Partial<AssistantMessage> | undefined;
  if (typeof message !== 'object' || message === null || message.role !== 'assistant') return 'no assistant message';
  if (typeof message.content !== 'string') {
    if (message.content != null) return 'a message whose content is not a string';
    message.content = '';
  }
  const calls = message.toolCalls;
  if (calls === undefined) return undefined;
  if (!Array.isArray(calls)) return 'toolCalls that are not a list of { id, name, args }';
  for (const call of calls) {
    if (typeof call !== 'object' || call === null || typeof call.name !== 'string') return 'toolCalls that are not a list of { id, name, args }';
  }
  return undefined;
}

function providerName(provider: ModelProvider): string {
  const className = provider.constructor?.name;
  // A plain object's constructor is `Object`, which names nothing.
  return provider.name ?? provider.modelId ?? (className && className !== 'Object' ? className : '(unnamed)');
}

/** The provider's reply: streamed when the run streams and the call is a turn of the loop. */
function ask(run: Run, provider: ModelProvider, request: GenerateOptions, call: ModelCall | undefined): Promise<GenerateResult> {
  return call !== undefined && run.streaming && provider.stream !== undefined ? streamReply(run, call, provider, request, call.step) : provider.generate(request);
}

/**
 * One call of a provider, for a turn of the loop (`call`) or a side call: in its span, checked,
 * counted in the run's usage; a turn's reply is placed in the transcript.
 */
async function callProvider(run: Run, provider: ModelProvider, request: GenerateOptions, purpose: string, call?: ModelCall): Promise<GenerateResult> {
  const span = run.tracing ? modelSpan(provider, request, purpose, run.span) : undefined;
  const signal = request.signal;
  // A retry asks again from the same transcript: the earlier attempt's reply leaves it first.
  call?.withdraw();
  let result: GenerateResult;
  try {
    result = await (span === undefined ? ask(run, provider, request, call) : inSpan(span, () => ask(run, provider, request, call)));
    // A reply that arrives after its call was given up (a timeout) must not enter the transcript.
    signal?.throwIfAborted();
    checkReply(result, provider);
  } catch (error) {
    endModelSpan(span, undefined, error);
    throw markProviderError(error, providerName(provider));
  }
  endModelSpan(span, result);
  if (call?.closed) return result;
  run.countUsage(result.usage);
  call?.place(result.message);
  return result;
}

/** The terminal of the `model` stack: call the provider, count its usage, place the reply. */
export function providerStep(ctx: ModelContext): Promise<GenerateResult> {
  const call = ctx as ModelCall;
  const run = runOf(call);
  return callProvider(run, run.setup.provider, call.request, call.purpose, call);
}

/**
 * Start one model turn of the loop: count the step and build the call's context, whose request
 * holds the live transcript (not a copy). The loop sends it through the `model` stack itself,
 * so a turn costs no async function (and microtask) of its own.
 */
export function modelTurn(run: Run): ModelCall {
  const step = ++run.state.steps;
  const call = new ModelCall(run, turnRequest(run), step, 'turn');
  if (run.listening) run.publish({ type: 'model.start', step, purpose: 'turn' });
  return call;
}

/** A turn's request: the agent's model settings, then the live transcript, a copy of the tool specs, the run's signal. */
function turnRequest(run: Run): GenerateOptions {
  // Object.assign, not a spread: V8 spreads objects of changing shapes (agents' settings) very slowly.
  const request = Object.assign({}, run.setup.modelSettings) as GenerateOptions;
  request.messages = run.state.messages;
  request.tools = run.setup.toolSpecs.slice();
  request.signal = run.base.signal;
  return request;
}

/** The `model` stack settled: keep the reply its outermost layer returned. */
export function keepReply(run: Run, call: ModelCall, result: GenerateResult): void {
  call.closed = true;
  // The segment failed while this call ran (an orphaned loop): its reply may not enter the state.
  if (run.over) return;
  const { step } = call;
  // A layer that ended the run without calling the model leaves no reply behind.
  if (run.end === undefined || call.reply !== undefined) {
    uniqueCallIds(result.message, run.state);
    call.place(result.message);
    if (run.streaming) releaseText(run, call, result.message, step);
  }
  if (run.listening) run.publish({ type: 'model.done', step, purpose: 'turn', message: result.message, usage: result.usage, finishReason: result.finishReason });
}

/** The `model` stack failed: the call leaves no reply in the transcript. */
export function dropReply(run: Run, call: ModelCall): void {
  call.closed = true;
  call.withdraw();
  // The consumer must not keep showing text of a call that left no reply in the transcript.
  if (run.streaming) retractText(run, call, call.step);
}

/**
 * Give every tool call an id unique in the run (some servers repeat `call_0` each turn), and
 * enter it in the ledger: ids key the idempotency keys and the ledger, so they must not collide.
 */
function uniqueCallIds(message: AssistantMessage, state: RunState): void {
  const calls = message.toolCalls;
  if (calls === undefined) return;
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i];
    if (typeof call.id !== 'string' || call.id === '' || state.ledger[call.id] !== undefined) {
      call.id = `call_${state.steps}_${i}${typeof call.id === 'string' && call.id !== '' ? `_${call.id}` : ''}`;
    }
    state.ledger[call.id] = 'pending';
  }
}

/** A side model call (`ctx.generate`): straight to the provider, counted in the run's usage. */
export async function sideCall(run: Run, provider: ModelProvider, request: Partial<GenerateOptions> & Pick<GenerateOptions, 'messages'>, purpose: string): Promise<GenerateResult> {
  if (typeof provider?.generate !== 'function') throw new TypeError('ctx.generate(provider, request, purpose): provider must be a model provider (an object with generate)');
  if (!Array.isArray(request?.messages)) throw new TypeError('ctx.generate(provider, request, purpose): request.messages must be an array of messages');
  const step = run.state.steps;
  if (run.listening) run.publish({ type: 'model.start', step, purpose });
  const result = await callProvider(run, provider, { tools: [], signal: run.base.signal, ...request }, purpose);
  if (run.listening) run.publish({ type: 'model.done', step, purpose, message: result.message, usage: result.usage, finishReason: result.finishReason });
  return result;
}
