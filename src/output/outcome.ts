import type { Meta } from './envelope.js'
import type { StreamSpec } from './ndjson.js'

const BRAND = Symbol.for('agentcli.outcome')

/** Data to wrap in a success envelope. */
export type DataOutcome = { [BRAND]: true; kind: 'data'; data: unknown; schemaVersion: string; meta: Partial<Meta> }

/** Bytes for `--format raw`, passed through unwrapped. */
export type RawOutcome = { [BRAND]: true; kind: 'raw'; body: string | Uint8Array | AsyncIterable<string | Uint8Array> }

/** Items to render as NDJSON. */
export type StreamOutcome = { [BRAND]: true; kind: 'stream'; spec: StreamSpec }

/** What a command hands the entry to render. */
export type Outcome = DataOutcome | RawOutcome | StreamOutcome

/** Build a stream outcome. */
export function streamOutcome(spec: StreamSpec): StreamOutcome {
  return { [BRAND]: true, kind: 'stream', spec }
}

/** Build a data outcome. */
export function dataOutcome(data: unknown, schemaVersion: string, meta: Partial<Meta> = {}): DataOutcome {
  return { [BRAND]: true, kind: 'data', data, schemaVersion, meta }
}

/** Build a raw outcome. */
export function rawOutcome(body: RawOutcome['body']): RawOutcome {
  return { [BRAND]: true, kind: 'raw', body }
}

/** True for values built by {@link dataOutcome} or {@link rawOutcome}. */
export function isOutcome(value: unknown): value is Outcome {
  return typeof value === 'object' && value !== null && (value as { [BRAND]?: unknown })[BRAND] === true
}
