import { defineConfig } from 'vitest/config'

// Two cores here: most tests spawn the real bin, so a small fork pool keeps the machine responsive.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    // Security code carries a 100% gate (unit tests in-process; command-level tests spawn the bin and do not count):
    // confirm tokens and the `--confirm` check order with its refusals; the audit record; the HTTP client's
    // credential handling (origin binding, redirects, bodies); update verification (signature and identity, the
    // TUF-refreshed trusted root, npm provenance).
    coverage: {
      provider: 'v8',
      include: [
        'src/confirm/**',
        'src/audit/**',
        'src/write/confirm-flow.ts',
        'src/write/refusals.ts',
        'src/write/call.ts',
        'src/output/redact*.ts',
        'src/http/client.ts',
        'src/http/origin.ts',
        'src/http/body.ts',
        'src/update/signature.ts',
        'src/update/trust-root.ts',
        'src/update/provenance.ts',
        'src/update/errors.ts',
      ],
      reporter: ['text-summary'],
      thresholds: { lines: 100, branches: 100, functions: 100, statements: 100 },
    },
    hookTimeout: 30_000,
  },
})
