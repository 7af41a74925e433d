/**
 * What the MCP server's stderr says of its warm pool, read in order: `mcp: warm process ready (pid N)` when a
 * process is ready, `mcp: <argv> (pid N)[ warm]` when a call starts. The server writes both in the same turn as the
 * event, so the order of the lines is the order of the events, whatever the machine's load.
 */
export type PoolLog = {
  /** Whether each call (in order) went to a warm process. */
  served: boolean[]
  /** Ready processes no call has taken yet. */
  idle: number[]
  /** Every place the log breaks the pool's rule: a warm call only on a ready process, a cold one only when none is. */
  violations: string[]
  /** The argv of each call the server ran in its own process (`mcp: <argv> (in-process)`), in order. */
  inProcess: string[]
}

/** Read the pool's events out of the server's stderr (see {@link PoolLog}). */
export function poolLog(stderr: string): PoolLog {
  const idle = new Set<number>()
  const served: boolean[] = []
  const violations: string[] = []
  const inProcess: string[] = []
  // A call run in the server's own process is no event of the pool's (its line names no PID).
  const pooled = stderr.replace(/^mcp: (.*) \(in-process\)\n/gm, (_line, argv: string) => {
    inProcess.push(argv)
    return ''
  })
  // An argv may hold a newline: an event runs from `mcp: ` at a line's start to ` (pid N)` at a line's end.
  for (const event of pooled.matchAll(/^mcp: ([\s\S]*?) \(pid (\d+)\)( warm)?$/gm)) {
    const [, what, pidText, warmMark] = event
    const pid = Number(pidText)
    if (what === 'warm process ready') {
      idle.add(pid)
      continue
    }
    const warm = warmMark !== undefined
    served.push(warm)
    if (warm && !idle.delete(pid)) violations.push(`${what}: warm on pid ${pid}, which was not a ready process`)
    if (!warm && idle.size > 0) violations.push(`${what}: cold while ${[...idle].join(', ')} was ready`)
  }
  return { served, idle: [...idle], violations, inProcess }
}
