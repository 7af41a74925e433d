import { spawn } from 'node:child_process'
import { dirname } from 'node:path'

/** What {@link onTerminal} saw: the terminal's bytes (stdout and stderr of the command, as a person sees them). */
export type TerminalRun = { stdout: string; status: number | null }

/**
 * Run `command` (a shell command line) on a real terminal: util-linux `script` gives it a pty. `answer` is typed
 * once `question` shows. script's stdin stays open until the run ends (at EOF, script would end the terminal's
 * input early) and no longer, so a run takes its own time, not a fixed one; past 15 s it is killed.
 */
export function onTerminal(
  command: string,
  env: Record<string, string>,
  answer?: { question: string; type: string },
): Promise<TerminalRun> {
  const child = spawn('script', ['-qec', command, '/dev/null'], {
    env: { ...env, PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, NO_COLOR: '1' },
    stdio: ['pipe', 'pipe', 'ignore'],
  })
  let stdout = ''
  let typed = false
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8')
    if (answer && !typed && stdout.includes(answer.question)) {
      typed = true
      child.stdin.write(`${answer.type}\r`)
    }
  })
  const deadline = setTimeout(() => child.kill('SIGKILL'), 15_000)
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (status) => {
      clearTimeout(deadline)
      resolve({ stdout, status })
    })
  })
}
