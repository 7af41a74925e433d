import { defineConfig } from 'vitest/config'

// Two cores here: most tests spawn the real bin, so a small fork pool keeps the machine responsive.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
})
