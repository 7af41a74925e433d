/**
 * The environment of the run in progress: `process.env` for a tool's own process, or the record an in-process
 * caller (a test, an embedder) handed to `run(root, { io })`. Every reader of the tool's settings (`toolEnv`,
 * `scopedEnv`, `toolDirs`) and of the few process-wide switches asks here, so one process can run one call after
 * another, each with its own environment, without touching `process.env`.
 */

let current: NodeJS.ProcessEnv | undefined

/** The environment of this run: the one the session was given, else `process.env`. */
export function runEnv(): NodeJS.ProcessEnv {
  return current ?? process.env
}

/** Set by the session when it opens: the injected environment, or undefined for the process's own; returns the one before. */
export function setRunEnv(env: NodeJS.ProcessEnv | undefined): NodeJS.ProcessEnv | undefined {
  const before = current
  current = env
  return before
}
