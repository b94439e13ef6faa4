import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type Tracer, type TracerProvider } from '@opentelemetry/api';
import type { Layer } from '../core/vocabulary/layer.js';
import type { RunContext, RunVariables, ToolContext } from '../core/vocabulary/contexts.js';
import { failureRecord, runFailure } from '../core/vocabulary/errors.js';
import type { RunResult } from '../core/vocabulary/result.js';
import type { RunState } from '../core/vocabulary/state.js';
import type { GenerateOptions, GenerateResult, ModelProvider } from '../core/vocabulary/model.js';
import type { ToolFailure, ToolOutcome } from '../core/vocabulary/outcome.js';
import type { ProviderCall } from '../core/run/agent-core.js';
import { decisionIn } from '../core/state/decisions.js';
import { decisionAttributes } from './layer-trace/attributes.js';
import { decisionEffect } from './layer-trace/record.js';

// Spans follow the OpenTelemetry GenAI semantic conventions (invoke_agent, chat, execute_tool).
// Without an SDK registered by the application, the API hands out non-recording spans: the
// attributes below are only computed when a span records.

/** Where a segment keeps its run span, and a tool call its span (in `ctx.runVar` and `ctx.var`). */
const RUN_SPAN: unique symbol = Symbol('koagent.runSpan');
const TOOL_SPAN: unique symbol = Symbol('koagent.toolSpan');

declare module '../core/vocabulary/contexts.js' {
  interface RunVariables {
    /** @internal koagent's own slot. */
    [RUN_SPAN]?: Span;
  }
  interface CallVariables {
    /** @internal koagent's own slot. */
    [TOOL_SPAN]?: Span;
  }
}

/**
 * The tracer of the global provider as it is now: one taken once would keep feeding a provider
 * the application has since removed (`trace.disable()`) and miss its next.
 */
function tracer(): Tracer {
  return trace.getTracerProvider().getTracer('koagent');
}

/** Start a span as a child of `parent` (explicitly, so no context manager is needed). */
function start(name: string, kind: SpanKind, parent: Span | undefined, attributes: () => Attributes): Span {
  const span = tracer().startSpan(name, { kind }, parent === undefined ? context.active() : trace.setSpan(context.active(), parent));
  if (span.isRecording()) span.setAttributes(attributes());
  return span;
}

/**
 * A call's span, or none when its run's span does not record (no SDK registered, or the trace
 * was sampled out): then the calls inside cost nothing to trace.
 */
function child(name: string, kind: SpanKind, parent: Span, attributes: () => Attributes): Span | undefined {
  return parent.isRecording() ? start(name, kind, parent, attributes) : undefined;
}

/** Run `fn` with `span` as the active span, so instrumented libraries inside nest under it. */
function inSpan<T>(span: Span, fn: () => T): T {
  return context.with(trace.setSpan(context.active(), span), fn);
}

/** A segment's variables to begin with: its run span (a traced mode's layers end it, and make their spans its children). */
export function spanVars(span: Span): RunVariables {
  return { [RUN_SPAN]: span };
}

/** The segment's run span, if it has one (a model call's layers' spans are its children). */
export function runSpanOf(ctx: { readonly runVar: RunVariables }): Span | undefined {
  return ctx.runVar[RUN_SPAN];
}

/**
 * The span a child run started by this call (a sub-agent) is a child of: the call's span, or,
 * when the run does not record (sampled out), the run's span, which passes that decision on.
 */
export function parentSpanOf(ctx: ToolContext): Span | undefined {
  return ctx.var[TOOL_SPAN] ?? ctx.runVar[RUN_SPAN];
}

/** Outermost in a traced segment's run stack: ends the run span with how the segment ended. */
export const runSpanLayer: Layer<RunContext, RunResult> = {
  name: 'koagent:trace-run',
  async fn(ctx, next) {
    const span = ctx.runVar[RUN_SPAN]!;
    let result: RunResult;
    try {
      result = await next();
    } catch (error) {
      endRunSpan(span, 'failed', undefined, failureRecord(runFailure(error, ctx.state as RunState)));
      throw error;
    }
    // The state as the segment ended it (it says `running` until the segment writes its end).
    endRunSpan(span, ctx.state.status, ctx.state.stopReason);
    return result;
  },
};

/** A `chat` span around each provider call (turns, retries and side calls alike). */
export const providerSpanLayer: Layer<ProviderCall, GenerateResult> = {
  name: 'koagent:trace-model',
  async fn(call, next) {
    const parent = call.runVar[RUN_SPAN]!;
    const span = modelSpan(call.provider, call.request, call.purpose, parent)!;
    let result: GenerateResult;
    try {
      result = await inSpan(span, () => next());
    } catch (error) {
      endModelSpan(span, undefined, error);
      throw error;
    }
    endModelSpan(span, result);
    return result;
  },
};

/** An `execute_tool` span around each call's whole pipeline. */
export const toolSpanLayer: Layer<ToolContext, ToolOutcome> = {
  name: 'koagent:trace-tool',
  async fn(ctx, next) {
    const span = toolSpan(ctx.toolName, ctx.toolCallId, ctx.runVar[RUN_SPAN]!)!;
    if (span !== undefined) ctx.var[TOOL_SPAN] = span;
    let outcome: ToolOutcome;
    try {
      outcome = await inSpan(span, () => next());
    } catch (error) {
      endToolSpan(span, undefined, error);
      throw error;
    }
    // A call that waits for a human did not run: its span says so, and its execution gets a span of its own after the resume.
    if (outcome.requiresApproval === true && span?.isRecording()) span.setAttribute('koagent.tool.approval_requested', true);
    // A call settling on a human's decision: what they decided, by whom, where.
    if (span?.isRecording() === true) {
      const decided = decisionIn(ctx.state as RunState, ctx.toolCallId);
      if (decided !== undefined) span.setAttributes(decisionAttributes(decisionEffect(decided)));
    }
    endToolSpan(span, outcome.error);
    return outcome;
  },
};

/** The span of one run segment (`invoke_agent`); a sub-agent's is a child of `parent`. */
export function runSpan(agent: { id: string; name: string }, runId: string, sessionId: string, segment: number, parent: Span | undefined): Span {
  return start(`invoke_agent ${agent.name}`, SpanKind.INTERNAL, parent, () => ({
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': agent.name,
    'gen_ai.agent.id': agent.id,
    'gen_ai.conversation.id': sessionId,
    'koagent.run.id': runId,
    'koagent.run.segment': segment,
  }));
}

/** The segment ended: how, on its span. */
function endRunSpan(span: Span, status: string, stopReason: string | undefined, error?: { code: string; message: string }): void {
  if (span.isRecording()) {
    span.setAttribute('koagent.run.status', status);
    if (stopReason !== undefined) span.setAttribute('koagent.run.stop_reason', stopReason);
    if (error !== undefined) {
      span.setAttribute('error.type', error.code);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    }
  }
  span.end();
}

function modelSpan(provider: ModelProvider, request: GenerateOptions, purpose: string, parent: Span): Span | undefined {
  const model = provider.modelId ?? 'unknown';
  return child(`chat ${model}`, SpanKind.CLIENT, parent, () => {
    const attributes: Attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': provider.name ?? 'unknown',
      'gen_ai.request.model': model,
      'koagent.call.purpose': purpose,
    };
    if (typeof request.temperature === 'number') attributes['gen_ai.request.temperature'] = request.temperature;
    if (typeof request.maxTokens === 'number') attributes['gen_ai.request.max_tokens'] = request.maxTokens;
    return attributes;
  });
}

function endModelSpan(span: Span | undefined, result: GenerateResult | undefined, error?: unknown): void {
  if (span === undefined) return;
  if (span.isRecording()) {
    if (result !== undefined) {
      span.setAttributes({
        'gen_ai.usage.input_tokens': result.usage?.inputTokens ?? 0,
        'gen_ai.usage.output_tokens': result.usage?.outputTokens ?? 0,
        'gen_ai.response.finish_reasons': [result.finishReason],
      });
    }
    if (error !== undefined) {
      span.setAttribute('error.type', (error as { name?: string })?.name ?? typeof error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    }
  }
  span.end();
}

function toolSpan(toolName: string, toolCallId: string, parent: Span): Span | undefined {
  return child(`execute_tool ${toolName}`, SpanKind.INTERNAL, parent, () => ({
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': toolName,
    'gen_ai.tool.call.id': toolCallId,
  }));
}

function endToolSpan(span: Span | undefined, error: ToolFailure | undefined, thrown?: unknown): void {
  if (span === undefined) return;
  if (span.isRecording()) {
    if (error !== undefined) {
      span.setAttribute('error.type', error.kind);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    } else if (thrown !== undefined) {
      span.setAttribute('error.type', 'exception');
      span.setStatus({ code: SpanStatusCode.ERROR, message: thrown instanceof Error ? thrown.message : String(thrown) });
    }
  }
  span.end();
}

export type { Span };
