import { usageError } from '../errors/agent-error.js'
import { runStdin } from '../runtime/run-io.js'

/** A question a command may ask a person, and the flag that answers it without a person. */
export type Question = {
  /** What to ask, one line (shown on stderr). */
  message: string
  /** The flag that answers it non-interactively (`--title`): named in the error when nobody can be asked. */
  flag: string
  /** Offered when the person just presses Enter. */
  default?: string
}

/**
 * Whether this call may ask a person anything: only when stdin is a terminal and `--no-input` was not given. An
 * agent's stdin is a pipe or closed, so it never meets a prompt it cannot answer.
 */
export function canPrompt(noInput: boolean, stdin: { isTTY?: boolean } = runStdin()): boolean {
  return !noInput && Boolean(stdin.isTTY)
}

/**
 * Ask a person one question on the terminal. Where nobody can be asked (`--no-input`, or stdin not a TTY) this
 * never waits: it is `E_USAGE` naming the flag that answers the question, so the caller can retry with it.
 */
export async function ask(question: Question, noInput: boolean): Promise<string> {
  if (!canPrompt(noInput)) {
    throw usageError(`${question.message.replace(/[?:]\s*$/, '')}: no one can be asked here; pass ${question.flag}`, {
      missing: [question.flag],
      reason: noInput ? 'no_input' : 'stdin_not_a_tty',
      hint: `pass ${question.flag} <value>; prompts run only on a terminal without --no-input`,
    })
  }
  const { createInterface } = await import('node:readline/promises')
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true })
  try {
    const suffix = question.default === undefined ? '' : ` [${question.default}]`
    const answer = (await rl.question(`${question.message}${suffix} `)).trim()
    return answer === '' && question.default !== undefined ? question.default : answer
  } finally {
    rl.close()
  }
}
