import { realpathSync, statSync } from 'node:fs'
import { delimiter, isAbsolute, join, resolve } from 'node:path'
import { runEnv } from '../settings/run-env.js'
import { runScript } from './run-io.js'
import { getRunState } from './run-state.js'

/** Quote one shell word only when it needs it, so printed commands stay readable and paste as they are. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`
}

function real(path: string): string | undefined {
  try {
    return statSync(path).isFile() ? realpathSync(path) : undefined
  } catch {
    return undefined
  }
}

/** The first executable `name` on PATH, resolved through symlinks. */
function onPath(name: string): string | undefined {
  for (const dir of (runEnv().PATH ?? '').split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue
    const found = real(join(dir, name))
    if (found) return found
  }
  return undefined
}

const memo = new Map<string, string>()

/**
 * The words that start this tool again exactly as it was started: its bin name when PATH resolves that name to
 * the script running now, else `node <absolute script>` (the interpreter by name when PATH's `node` is this one).
 * Every next-step hint (`poll`, `resume`, `dry_run_command`, `next:`) begins with it, so an agent can run a hint
 * as printed even when the tool is not installed on PATH. Computed once per script, bin and PATH (a process runs
 * one; an in-process caller may run several, each with its own script and environment).
 */
export function invocation(bin: string = getRunState()?.bin ?? ''): string {
  const started = runScript()
  const key = `${bin}\0${started}\0${runEnv().PATH}`
  const cached = memo.get(key)
  if (cached !== undefined) return cached
  const script = started ? resolve(started) : undefined
  const self = script ? (real(script) ?? script) : undefined
  let words: string
  if (!script || (bin && onPath(bin) === self)) words = bin
  else {
    const node = onPath('node') === real(process.execPath) ? 'node' : process.execPath
    words = `${shellQuote(node)} ${shellQuote(script)}`
  }
  memo.set(key, words)
  return words
}

/**
 * A command written for a tool on PATH (`tasks job status --id j_1`) as this process can actually run it. Text
 * that does not start with the bin is returned unchanged.
 */
export function runnable(command: string, bin: string = getRunState()?.bin ?? ''): string {
  if (!bin || (command !== bin && !command.startsWith(`${bin} `))) return command
  return `${invocation(bin)}${command.slice(bin.length)}`
}

/**
 * Prose that names commands in backticks (a hint, a fix: "run `tasks list` to see task ids"), each command that
 * starts with the bin rewritten by {@link runnable}, so the agent can run it as printed.
 */
export function runnableText(text: string, bin: string = getRunState()?.bin ?? ''): string {
  if (!bin) return text
  return text.replace(/`([^`]+)`/g, (whole, command: string) => {
    const runnableCommand = runnable(command, bin)
    return runnableCommand === command ? whole : `\`${runnableCommand}\``
  })
}
