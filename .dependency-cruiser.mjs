// The import-graph gates of `npm run check` (dependency-cruiser): every source file of the framework, the
// built-ins, the example tool and the bins is cruised, type-only imports included, so a rule holds from every
// entry point. test/unit/graph/import-graph.test.ts shows each rule failing on a violating fixture.

/** Modules that may import a guarded one; anything else importing it is a second home for its concern. */
const only = (...paths) => `^(${paths.map((p) => p.replaceAll('.', '\\.')).join('|')})$`

/** A rule: only `importers` may import `module` (with `typesAnywhere`, type-only imports are free). */
const guarded = (name, comment, module, importers, { typesAnywhere = false } = {}) => ({
  name,
  severity: 'error',
  comment,
  from: { pathNot: only(...importers) },
  to: { path: only(module), ...(typesAnywhere ? { dependencyTypesNot: ['type-only'] } : {}) },
})

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import circles, type-only ones included.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'private-stays-home',
      severity: 'error',
      comment: 'A `_private` file is imported only from its own folder: import its folder’s public module instead.',
      from: { path: '^(.*)/[^/]+$' },
      to: { path: '/_[^/]+$', pathNot: '^$1/_[^/]+$' },
    },
    {
      name: 'redactor-at-choke-points',
      severity: 'error',
      comment:
        'The redactor is called by the choke points (renderer, NDJSON writer, stderr guard and writer, progress, the audit ' +
        'writer) and the framework state writers, nowhere else: a new output path belongs in the renderer. The build ' +
        'asks it for its verdict on the compact reference it stores (src/build/compact-memo.ts), under the rules a run ' +
        "of the tool starts with, and for the prefilter of the tool's key words (src/build/tool-keys.ts).",
      from: {
        pathNot: only(
          'src/audit/argv.ts',
          'src/audit/writer.ts',
          'src/build/compact-memo.ts',
          'src/build/tool-keys.ts',
          'src/confirm/idempotency.ts',
          'src/fleet/ledgers.ts',
          'src/index.ts',
          'src/jobs/runtime.ts',
          'src/output/ndjson.ts',
          'src/output/progress.ts',
          'src/output/render.ts',
          'src/output/stderr.ts',
          'src/output/stdout.ts',
          'src/runtime/session.ts',
        ),
      },
      to: { path: only('src/output/redact.ts') },
    },
    {
      name: 'stdout-through-renderer',
      severity: 'error',
      comment:
        'Only the session (its guard), the renderer and its NDJSON/chunk writers, and `tool mcp` (its transport) ' +
        'reach the stdout writer: every envelope passes the redactor on its way.',
      from: {
        pathNot: only(
          'src/runtime/entry.ts',
          'src/runtime/session.ts',
          'src/output/render.ts',
          'src/output/ndjson.ts',
          'src/output/chunk-writer.ts',
          'src/output/sinks.ts',
          'src/mcp/server.ts',
        ),
      },
      to: { path: only('src/output/stdout.ts') },
    },
    {
      name: 'sinks-through-renderer',
      severity: 'error',
      comment:
        'The renderer and its NDJSON writer are the only writers to the output sinks (a caller may hand its own ' +
        'sinks in, by type): whatever reaches them has passed the redactor.',
      from: { pathNot: only('src/output/render.ts', 'src/output/ndjson.ts') },
      to: { path: only('src/output/sinks.ts'), dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'tokens-in-write-flow',
      severity: 'error',
      comment: 'A confirm token is minted by the dry-run and verified by the confirm flow only (types aside).',
      from: { pathNot: `^src/confirm/|${only('src/write/confirm-flow.ts', 'src/write/dry-run.ts')}` },
      to: { path: only('src/confirm/token.ts'), dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'fields-in-one-place',
      severity: 'error',
      comment:
        '--fields is selected and projected through src/output/fields.ts by the run template, the NDJSON writer ' +
        'and the reference (types aside).',
      from: { pathNot: only('src/run/template.ts', 'src/output/ndjson.ts', 'src/describe/command.ts') },
      to: { path: only('src/output/fields.ts'), dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'one-audit-module',
      severity: 'error',
      comment: 'The audit record is drafted, noted and written through src/audit only.',
      from: {
        pathNot: `^src/audit/|${only('src/runtime/entry.ts', 'src/runtime/session.ts', 'src/write-command.ts')}`,
      },
      to: { path: '^src/audit/(open|pending|writer)\\.ts$' },
    },
    guarded(
      'redaction-proof-of-the-stored-compact',
      "The redactor's walk skips only what src/output/redact-proof.ts vouches for, and only the compact reference the " +
        'build stored and proved clean vouches (src/describe/baked-compact.ts): nothing a command computes.',
      'src/output/redact-proof.ts',
      ['src/describe/baked-compact.ts', 'src/output/redact.ts'],
    ),
    guarded(
      'env-prefix-one-home',
      "A tool's env prefix is computed by src/settings/env-prefix.ts and asked of src/settings/tool-env.ts " +
        '(`toolEnv`, or its re-export of `envPrefix`): a second importer would be a second rule for the prefix.',
      'src/settings/env-prefix.ts',
      ['src/settings/tool-env.ts'],
    ),
    guarded(
      'output-check-in-run-template',
      'Output validation (its switch and the check of data against the declared schema) is done by the run ' +
        'template through src/run/check-output.ts only.',
      'src/run/check-output.ts',
      ['src/run/template.ts'],
    ),
    guarded(
      'run-state-read-once',
      'A command reads the run state once, through its context (src/command.ts); the entry and session set it, ' +
        'invocation and run-io read it for code outside a command, and `tool mcp` puts its own back around a read ' +
        'it runs in its process. Everything else is handed what it needs (types aside).',
      'src/runtime/run-state.ts',
      [
        'src/command.ts',
        'src/mcp/in-process.ts',
        'src/runtime/invocation.ts',
        'src/runtime/run-io.ts',
        'src/runtime/session.ts',
      ],
      { typesAnywhere: true },
    ),
    guarded(
      'routing-in-route',
      'Command words are matched by src/route/match.ts (the longest id wins), asked by the modules that route: the ' +
        "entry and its look-up of the tool's own COMMANDS, `reference <path>`, `tool mcp` (a call job's command) and " +
        'verify. A new surface routes through it and is listed here; a module matching words on its own is a second ' +
        'router.',
      'src/route/match.ts',
      [
        'src/describe/select.ts',
        'src/mcp/tasks.ts',
        'src/runtime/entry.ts',
        'src/runtime/own-commands.ts',
        'src/verify/invariants.ts',
      ],
    ),
    {
      name: 'table-and-router-stand-alone',
      severity: 'error',
      comment:
        'The universal-flags table and the router import nothing (no oclif, no flag builder), so every surface, the ' +
        'boot and the kit included, can derive from them instead of keeping a copy.',
      from: { path: only('src/universal-flags/table.ts', 'src/route/match.ts') },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.test.json' },
    skipAnalysisNotInRules: true,
  },
}
