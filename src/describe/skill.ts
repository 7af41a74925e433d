import { riskText } from '../write/risk.js'
import type { Reference } from './reference.js'

/** The directory name, and so the skill name, of a tool's skill. */
export function skillName(tool: string): string {
  return tool
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .replace(/-+/g, '-')
    .replace(/^-|-$/g, '')
}

function yamlString(s: string): string {
  return JSON.stringify(s)
}

function flagLine(p: Reference['commands'][number]['params'][number]): string {
  const name = p.kind === 'arg' ? `<${p.name}>` : `--${p.name}`
  const type = p.options ? p.options.join('|') : p.type
  const bits = [
    p.required ? 'required' : null,
    p.multiple ? 'repeatable' : null,
    p.default !== null && p.default !== false ? `default ${JSON.stringify(p.default)}` : null,
  ]
  const extra = bits.filter(Boolean).join(', ')
  const deprecated = p.deprecated ? ` **Deprecated:** ${p.deprecated.message}.` : ''
  return `  - \`${name}\` (${type}${extra ? `; ${extra}` : ''})${p.description ? `: ${p.description}` : ''}${deprecated}`
}

/**
 * Render a tool's SKILL.md from its `reference`: the same command definitions that produce `--help` and
 * `reference`, so the three cannot drift (seed 000 §9).
 */
export function renderSkill(ref: Reference): string {
  const name = skillName(ref.tool)
  const summary = ref.description || `The ${ref.tool} command-line tool.`
  const description =
    `${summary} Use it through its JSON contract: run \`${ref.tool} reference\` first, branch on error.code and the exit code, and preview writes with --dry-run before --confirm.`.slice(
      0,
      1024,
    )
  const writes = ref.commands.filter((c) => c.type === 'write')
  const lines: string[] = [
    '---',
    `name: ${name}`,
    `description: ${yamlString(description)}`,
    // Agent Skills metadata maps strings to strings: the requirement is one flat, dotted key.
    'metadata:',
    `  requires.min_version: ${yamlString(ref.version)}`,
    '---',
    '',
    `# ${ref.tool}`,
    '',
    summary,
    '',
    '## How to call it',
    '',
    `- Start with \`${ref.tool} reference\`: every command, flag, output schema and error code, as JSON. Pay only for`,
    `  what you need: \`${ref.tool} reference --compact\` (the same, lossless, a fraction of the bytes: shared schema`,
    `  parts under \`$defs\`, defaults left out; \`expandReference\` in agentcli restores it), \`${ref.tool} reference`,
    `  <command>\` (only that command, compact, without the tool-wide parts this file already has; \`--full\` for`,
    `  everything), and \`--fields\` on any call.`,
    '- stdout is exactly one JSON envelope: `{ok, schema_version, data | error, meta}`. Check `ok` first; read',
    '  `data` on success and `error.code` on failure. Never parse `error.message` or `--help`.',
    '- JSON is the default format, on one line off a terminal (`--pretty` indents it). `--fields a,b.c` keeps only',
    '  what you need: on a list, name `items.id,next_cursor` (paths of the page) or just `id,title` (fields of each',
    "  item; the page keys then stay). `reference` lists each command's paths in `fields`.",
    '- Lists are paged: pass `data.next_cursor` back as `--cursor` and repeat the same filters and `--limit` (a',
    '  cursor is bound to the query that made it; under another it is E_VALIDATION). Pages are cut by sort key, so',
    '  changes meanwhile neither repeat nor skip items; `meta.truncated` is set only when items were left out.',
    '- A batch write reports every item. If some failed, re-run the same batch (`--dry-run`, then `--confirm`) with',
    '  the same `--idempotency-key`: landed items come back `already_applied: true` and are never applied twice.',
    `- \`${ref.tool} context\` shows versions, paths and whether credentials are configured; \`${ref.tool} doctor\` checks the install.`,
    '- Nothing prompts: pass `--no-input` (implied off a terminal) and a question is `E_USAGE` naming the flag to pass.',
    "- An async command returns `{job_id, poll}` at once; add `--wait` (and `--wait-timeout <s>`) to get the job's final",
    '  envelope instead. `E_TIMEOUT` carries `details.job_id` and `details.poll`: run the poll command exactly as given.',
    '- Next-step commands in errors (`dry_run_command`, `resume`, `poll`) are runnable exactly as printed.',
    '- `meta.notices[]` entries of type `deprecated` name a command or flag you used that goes away: switch to its',
    '  `replaced_by`. `reference` marks deprecated commands, flags and output fields the same way.',
    `- \`${ref.tool} reference\` has \`contract_version\`: the agentcli contract major. Pin a floor on it.`,
    `- After an update, read \`${ref.tool} changelog --since <previous version>\` before relying on new behaviour.`,
    '',
    '## Commands',
    '',
  ]
  lines.push(
    'Each command says what a call changes (its `type` in `reference`):',
    '',
    ...Object.entries(ref.command_kinds).map(([kind, meaning]) => `- \`${kind}\`: ${meaning}`),
    '',
  )
  for (const c of ref.commands) {
    lines.push(`### \`${ref.tool} ${c.path}\` (${c.type}${c.stream ? ', stream' : ''}${c.async ? ', async' : ''})`, '')
    if (c.deprecated) lines.push(`**Deprecated:** ${c.deprecated.message}. Do not use it in new calls.`, '')
    lines.push(c.description || c.summary, '')
    if (c.risk) lines.push(`Risk: ${riskText(c.risk)}.`, '')
    for (const f of c.deprecated_fields ?? []) lines.push(`- Output field \`${f.path}\` is deprecated: ${f.message}.`)
    if (c.deprecated_fields?.length) lines.push('')
    if (c.params.length > 0) lines.push(...c.params.map(flagLine), '')
    lines.push(`Example: \`${c.examples[0]}\``, '')
  }
  if (writes.length > 0) {
    lines.push(
      '## Writes: dry-run, then confirm',
      '',
      'A write never runs without a confirm token. Run the command with `--dry-run`: `data.preview` shows the change,',
      '`data.confirm_token` and `data.expires_at` come with it. Show the preview to the user if in doubt, then run the same',
      'command with the same arguments and `--confirm <token>`. A token is single-use, expires, and is bound to exactly',
      'what was previewed: if anything changed, the confirm fails with `E_CONFLICT` and `details.reason`; dry-run again.',
      '',
    )
  }
  lines.push('## Errors to handle', '', '| code | exit | retryable | meaning |', '| --- | --- | --- | --- |')
  for (const [code, e] of Object.entries(ref.error_codes))
    lines.push(`| \`${code}\` | ${e.exit} | ${e.retryable} | ${e.description} |`)
  lines.push(
    '',
    'Retry only when `retryable` is true, after backing off. On `E_HUMAN_REQUIRED` (exit 9), tell the user what',
    '`details.action` asks for, wait until they are done, then run `details.resume`; never retry it yourself.',
    '',
  )
  return lines.join('\n')
}

/** A SKILL.md's frontmatter: the text between its opening `---` line and the next; undefined when it has none. */
export function skillFrontMatter(markdown: string): string | undefined {
  return /^---\n([\s\S]*?)\n---/.exec(markdown)?.[1]
}

/** What {@link skillMinVersions} found for exact frontmatter texts (the build's memo, `src/describe/skill-memo.ts`). */
export type SkillMemo = ReadonlyArray<{ front_matter: string; min_versions: readonly string[] }>

const NO_MEMO: SkillMemo = []

/**
 * The `min_version`s a SKILL.md's frontmatter declares: `metadata["requires.min_version"]` (what agentcli writes),
 * and the nested `metadata.requires.min_version` and `metadata.openclaw.requires.min_version` others write.
 */
export async function skillMinVersions(markdown: string, memo: SkillMemo = NO_MEMO): Promise<string[]> {
  const text = skillFrontMatter(markdown)
  if (text === undefined) return []
  // What the build parsed for exactly this text (a tool's own SKILL.md and its installed copies): no `yaml` load.
  const known = memo.find((entry) => entry.front_matter === text)
  if (known) return [...known.min_versions]
  const { parse } = await import('yaml')
  let front: unknown
  try {
    front = parse(text)
  } catch {
    return []
  }
  const meta = (front as { metadata?: Record<string, unknown> } | null)?.metadata
  const read = (value: unknown) => {
    const holder = value as { requires?: { min_version?: unknown }; 'requires.min_version'?: unknown } | undefined
    const v = holder?.['requires.min_version'] ?? holder?.requires?.min_version
    return typeof v === 'string' ? [v] : []
  }
  return [...read(meta), ...read(meta?.openclaw)]
}
