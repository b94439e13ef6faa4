// A run's calls as a timeline, one block per segment, each on its own time axis: a segment that
// ran after a long wait (an approval answered two minutes later) does not squash the others into
// lines. The wait between segments is drawn as a break that says how long it was. Each block's
// head is the segment (its run layers, its outcome): picking it shows its run layers' onion.
import type { TracedCall, TracedSegment } from '../trace-types.ts';
import { ms, when } from './client.ts';

/** One segment of the run and the calls it made (a sub-agent's with the lead's call that ran them). */
export interface SegmentBlock {
  segment: number;
  /** The trace's entry of the segment, when the record keeps segments. */
  entry?: TracedSegment;
  /** Indexes into the run's calls. */
  calls: number[];
}

/** The run's calls grouped by the segment of the lead's calls, with the segments' entries (a segment without calls too). */
export function segmentBlocks(calls: TracedCall[], segments: TracedSegment[] = []): SegmentBlock[] {
  const blocks: SegmentBlock[] = [];
  calls.forEach((call, i) => {
    const last = blocks[blocks.length - 1];
    if (last !== undefined && (call.parentCallId !== undefined || call.segment === last.segment)) last.calls.push(i);
    else blocks.push({ segment: call.segment, calls: [i] });
  });
  for (const entry of segments) {
    if (entry.parentCallId !== undefined) continue;
    const block = blocks.find((b) => b.segment === entry.segment && b.entry === undefined);
    if (block !== undefined) block.entry = entry;
    else blocks.push({ segment: entry.segment, entry, calls: [] });
  }
  return blocks.sort((a, b) => a.segment - b.segment);
}

/** When a block's calls (or, without calls, its segment) began and ended. */
function extent(block: SegmentBlock, calls: TracedCall[]): { start: number; end: number } {
  if (block.calls.length === 0) return { start: block.entry!.startedAt, end: block.entry!.startedAt + block.entry!.durationMs };
  const start = Math.min(...block.calls.map((i) => calls[i]!.startedAt));
  const end = Math.max(...block.calls.map((i) => calls[i]!.startedAt + calls[i]!.durationMs));
  return { start, end };
}

/** A bar's place on its block's axis, in percent: never past the track's end, however short the call. */
function place(call: TracedCall, start: number, span: number): { left: number; width: number } {
  const width = Math.min(100, Math.max(0.5, (call.durationMs / span) * 100));
  const left = Math.min(100 - width, ((call.startedAt - start) / span) * 100);
  return { left: Math.max(0, left), width };
}

export interface Picked {
  call?: number;
  segment?: number;
}

export function Timeline({ calls, segments, picked, pick }: { calls: TracedCall[]; segments?: TracedSegment[]; picked: Picked; pick: (picked: Picked) => void }) {
  const blocks = segmentBlocks(calls, segments);
  return (
    <div class="waterfall" data-testid="waterfall">
      {blocks.map((block, b) => {
        const { start, end } = extent(block, calls);
        // Not floored at a whole millisecond: a block of sub-millisecond calls still spans its track.
        const span = Math.max(0.001, end - start);
        const before = b > 0 ? extent(blocks[b - 1]!, calls).end : undefined;
        const entry = block.entry;
        return (
          <>
            {before !== undefined && <div class="segment-break" data-testid="segment-break">⋯ {ms(Math.max(0, start - before))} later</div>}
            <div class="segment" data-segment={block.segment}>
              <button type="button" class={`segment-head ${picked.segment === block.segment ? 'picked' : ''}`} data-segment={block.segment} onClick={() => pick({ segment: block.segment })}>
                <strong>segment {block.segment}</strong>
                <span class="muted small"> · {when(start)} · {ms(end - start)} on this axis</span>
                {entry && <span class={`outcome ${entry.outcome} small`}> · {entry.outcome}</span>}
                {entry && <span class="muted small" data-testid="run-layers"> · {entry.layers.length === 0 ? 'no run layers' : `run layers: ${[...new Set(entry.layers.map((l) => l.name))].join(', ')}`}</span>}
              </button>
              {block.calls.map((i) => {
                const call = calls[i]!;
                const bar = place(call, start, span);
                return (
                  <button type="button" class={`bar-row ${picked.call === i ? 'picked' : ''} ${call.parentCallId === undefined ? '' : 'nested'}`} data-call={call.id} data-index={i} onClick={() => pick({ call: i })}>
                    <span class="bar-label" style={{ paddingLeft: `${(call.agentPath?.length ?? 0) * 14}px` }}>{call.agentPath ? '↳ ' : ''}{call.kind} {call.name}</span>
                    <span class="bar-track">
                      <span class={`bar ${call.kind} ${call.outcome}`} style={{ left: `${bar.left}%`, width: `${bar.width}%` }} />
                    </span>
                    <span class="bar-time">+{ms(call.startedAt - start)} · {ms(call.durationMs)}</span>
                  </button>
                );
              })}
            </div>
          </>
        );
      })}
    </div>
  );
}
