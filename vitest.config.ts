import { defineConfig } from 'vitest/config'
import { HeavyFirst } from './test/support/heavy-first.js'

/**
 * Two tiers. `unit`: in-process (renderers, parsers, builders, the security code, and whole calls of a tool through
 * `run(root, { io })`, test/support/in-process.ts; a test may start a bare `node` for an OS-level property such as a
 * cross-process lock, never the tool's bin). `spawn`: the real boundary (the bin as a child process: signals, races,
 * a clock preload, a terminal, job workers, services, installs, MCP; test/cli/runtime/in-process.test.ts keeps the
 * in-process run alike). `npm run test:unit` runs the first.
 * `node scripts/test-layout.mjs` moves a test written at the top of test/ into its place.
 */
/**
 * The in-process files that replace a Node built-in with `vi.mock` (to inject a failing `rm`, `link` or `write`): in
 * a module graph shared with other files, a module those files imported first keeps the real one, so the injected
 * fault depends on the order files reach a worker. They get a module graph of their own.
 */
const MOCKS_BUILTINS = 'test/unit/confirm/{confirm,os-random}.test.ts'

/** The spawn files that load the native keychain binding in the test process. */
const KEYCHAIN = 'test/cli/credentials/{keychain,keyring-helper}.test.ts'

export default defineConfig({
  test: {
    // Two cores here. A spawn test mostly waits on the bin it started, so a third worker fills those waits: the whole
    // suite took 281 s with 3, 309 s with 2 and 290 s with 4 (same CPU time; more only adds contention).
    pool: 'forks',
    maxWorkers: 3,
    // The longest spawn files first, so none of them starts last and runs alone (test/support/heavy-first.ts).
    sequence: { sequencer: HeavyFirst },
    testTimeout: 30_000,
    // Built JavaScript (agentcli's dist/, a tool's dist/) runs on Node itself, as in a tool's process: an in-process
    // run (test/support/in-process.ts) and the commands oclif loads are then one module instance.
    server: { deps: { external: [/\/dist\/.*\.js$/] } },
    hookTimeout: 30_000,
    projects: [
      // In-process tests share one module graph per worker (each file still gets its own test module): importing
      // the framework once per worker instead of once per file halves the tier's CPU. A test that changes a
      // process-wide setting puts it back.
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          exclude: [MOCKS_BUILTINS],
          isolate: false,
          // The shared tree's check first: its teardown runs last, after the others removed what they made. No
          // prerequisite check: nothing here connects to PostgreSQL or Redis or starts a keyring.
          globalSetup: ['test/support/shared-tree.global.ts', 'test/support/code-cache.global.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'unit-isolated',
          include: [MOCKS_BUILTINS],
          globalSetup: ['test/support/shared-tree.global.ts', 'test/support/code-cache.global.ts'],
        },
      },
      {
        extends: true,
        // One agentcli tarball and one Node 22 per run, made by the first file that needs them
        // (test/support/once-per-run.ts). One module graph per worker here too (the test code and its support imported
        // once per worker, not per file).
        test: {
          name: 'spawn',
          include: ['test/cli/**/*.test.ts'],
          exclude: [KEYCHAIN],
          isolate: false,
          // PostgreSQL and Redis (the fleet and MCP scale-out tests): checked first, before the fixture is built.
          globalSetup: [
            'test/support/prereqs.global.ts',
            'test/support/shared-tree.global.ts',
            'test/support/code-cache.global.ts',
            'test/support/pack-dir.global.ts',
            'test/support/fixture-bundle.global.ts',
          ],
        },
      },
      {
        extends: true,
        // The native keychain binding keeps the D-Bus address of the first file that loads it: a process per file.
        test: {
          name: 'spawn-keychain',
          include: [KEYCHAIN],
          // dbus and gnome-keyring, checked first (test/support/prereqs.ts).
          globalSetup: [
            'test/support/prereqs.global.ts',
            'test/support/shared-tree.global.ts',
            'test/support/code-cache.global.ts',
            'test/support/pack-dir.global.ts',
          ],
        },
      },
    ],
    // Security code carries a 100% gate, met by the unit tier alone: `npm test` collects coverage there only (V8's
    // precise coverage in the spawn tier's workers cost ≈ 30–40 s of a run and counts nothing a spawned bin runs):
    // confirm tokens and the dry-run that mints them (bound to the plan, the principal and the tool); the write flow's
    // order (the policy gate before the token, a finished key's replay before the refusal, E_CONFIRMATION_REQUIRED
    // before any plan) and the `--confirm` check order with its refusals; the audit record; the HTTP client's
    // credential handling (origin binding, redirects, bodies); the upstream token a list's cursor carries; update
    // verification (signature and identity, the TUF-refreshed trusted root, npm provenance and what an npm install
    // expects of it: no repository refused, the identity from the tag prefix, the registry); the policy gate and
    // approvals (SSH signatures, requests, store), judged again by an async write's worker; MCP task ids (bearer tokens
    // bound to their principal), the sealed state of input-required rounds (bound to theirs), the calls a 2025-11-25
    // cancel may stop (its principal's, in its session), and the HTTP endpoint's body deadlines and where it may be
    // reached without a token.
    coverage: {
      provider: 'v8',
      include: [
        'src/confirm/**',
        'src/audit/**',
        'src/write/flow.ts',
        'src/write/dry-run.ts',
        'src/write/confirm-flow.ts',
        'src/write/refusals.ts',
        'src/write/call.ts',
        'src/write/gate.ts',
        'src/write/job-check.ts',
        'src/policy/**',
        'src/approvals/**',
        'src/write/risk.ts',
        'src/output/redact*.ts',
        'src/http/client.ts',
        'src/http/origin.ts',
        'src/http/body.ts',
        'src/list/upstream-cursor.ts',
        'src/list/upstream-page.ts',
        'src/update/signature.ts',
        'src/update/trust-root.ts',
        'src/update/provenance.ts',
        'src/update/npm-install.ts',
        'src/update/errors.ts',
        'src/mcp/_tasks-map.ts',
        'src/mcp/legacy-cancel.ts',
        'src/mcp/request-state.ts',
        'src/mcp/http-body.ts',
        'src/mcp/http-exposure.ts',
      ],
      reporter: ['text-summary'],
      thresholds: { lines: 100, branches: 100, functions: 100, statements: 100 },
    },
  },
})
