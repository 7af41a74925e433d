import type { TestProject } from 'vitest/node'
import { checkPrerequisites, MACHINE } from './prereqs.js'

/**
 * The first global setup of the projects that need the machine's services or programs (`PROJECT_NEEDS`,
 * test/support/prereqs.ts): before anything is built or started, it names every prerequisite missing for the
 * projects with files in this run, one line each, and the run stops; otherwise each of their files would fail on
 * its own, one cause at a time. The projects of the run, not only this one: `npm test` runs `spawn` and
 * `spawn-keychain` together, and vitest stops at the first global setup that throws, so the first to run names
 * the lot (the second finds the same).
 */
export default async function setup(project: TestProject): Promise<void> {
  const files = project.vitest.state.getPaths()
  const running = project.vitest.projects.filter((p) => files.some((file) => p.matchesTestGlob(file)))
  const error = await checkPrerequisites(
    running.map((p) => p.name),
    MACHINE,
  )
  if (error) throw error
}
