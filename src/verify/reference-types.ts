/** The parts of a target's `reference` the verifier reads (it never imports the target's code). */
export type RefParam = {
  name: string
  kind: 'flag' | 'arg'
  type: string
  required: boolean
  options: string[] | null
  multiple?: boolean
  default?: unknown
}
/** A command as the target's `reference` describes it (the part verify reads). */
export type RefCommand = {
  path: string
  type: 'read' | 'local' | 'write'
  params: RefParam[]
  output_schema: Record<string, unknown>
  examples: string[]
  stream: boolean
  raw: boolean
  async: boolean
}
/** The target's `reference` (the part verify reads). */
export type Ref = {
  tool: string
  version: string
  schema_version: string
  release_readiness: {
    level: string
    fcc_status: string
    mock_upstream_status: string
    live_smoke_status: string
    reason?: string
  }
  commands: RefCommand[]
  error_codes: Record<string, { exit: number; retryable: boolean }>
  global_flags: RefParam[]
}

/** The keys `reference` must have. */
export const REFERENCE_KEYS = [
  'tool',
  'version',
  'schema_version',
  'release_readiness',
  'commands',
  'exit_codes',
  'error_codes',
] as const
