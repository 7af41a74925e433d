import type { ZodNamespace } from '../schema/output.js'

/**
 * What a write does to the world, declared once per command beside its `kind` (`static risk`) and shown in
 * `reference`, `--help`, SKILL.md, the MCP annotations and every dry-run preview; the policy gate (`src/policy/`)
 * judges a call by it.
 */
export const RISK_ACTIONS = {
  create: 'Adds records; nothing existing is changed.',
  update: 'Changes existing records.',
  delete: 'Removes records.',
  execute: 'Runs something whose effect the tool does not model record by record.',
} as const

/** How far one call can reach. */
export const BLAST_RADII = {
  one: 'One record per call.',
  set: 'A named or filtered set of records.',
  all: 'Every record the account can reach.',
} as const

/** One of {@link RISK_ACTIONS}. */
export type RiskAction = keyof typeof RISK_ACTIONS
/** One of {@link BLAST_RADII}. */
export type BlastRadius = keyof typeof BLAST_RADII

/** A command's declared risk. */
export type Risk = {
  /** What the change does (see `RISK_ACTIONS`). */
  readonly action: RiskAction
  /** How much one call can touch (see `BLAST_RADII`). */
  readonly blast_radius: BlastRadius
  /** Whether the change can be undone at all. */
  readonly reversible: boolean
  /** How it is undone (a command, a backup), or null. */
  readonly undo: string | null
  /** An external cost a call incurs (money, quota), in words, or null. */
  readonly cost: string | null
}

/**
 * The risk assumed of a write that declares none: it changes records, any number of them, and cannot be undone.
 * The strictest reading, so an undeclared command is never judged safer than it is.
 */
export const UNDECLARED_RISK: Risk = {
  action: 'update',
  blast_radius: 'set',
  reversible: false,
  undo: null,
  cost: null,
} as const

/** The zod schema of a risk declaration: checked when a tool is built or described. */
export function riskSchema(z: ZodNamespace) {
  return z
    .object({
      action: z.enum(Object.keys(RISK_ACTIONS) as [RiskAction, ...RiskAction[]]),
      blast_radius: z.enum(Object.keys(BLAST_RADII) as [BlastRadius, ...BlastRadius[]]),
      reversible: z.boolean(),
      undo: z.string().nullable(),
      cost: z.string().nullable(),
    })
    .strict()
}

/**
 * A command's risk, validated: undefined for a command that is not a write, {@link UNDECLARED_RISK} for a write
 * that declares none, and a thrown error naming the command for a declaration that does not parse.
 */
export function riskOf(command: { id?: string; risk?: unknown }, kind: string, z: ZodNamespace): Risk | undefined {
  if (kind !== 'write') return undefined
  if (command.risk === undefined) return UNDECLARED_RISK
  const parsed = riskSchema(z).safeParse(command.risk)
  if (!parsed.success)
    throw new Error(`${command.id ?? 'a command'} declares an invalid risk: ${parsed.error.issues[0]?.message}`)
  return parsed.data
}

/** The risk of a write in words: `delete, a set of records, cannot be undone`. */
export function riskText(risk: Risk): string {
  const radius = { one: 'one record', set: 'a set of records', all: 'every record' }[risk.blast_radius]
  const undo = risk.reversible ? (risk.undo ? `undo: ${risk.undo}` : 'can be undone') : 'cannot be undone'
  return [risk.action, radius, undo, ...(risk.cost ? [`cost: ${risk.cost}`] : [])].join('; ')
}
