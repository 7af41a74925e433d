import { archiveTool } from './archive.js'
import { writeChecksums } from './checksums.js'
import { preflight } from './preflight.js'
import { verifyPublished, verifyRelease } from './verify.js'

const USAGE = `usage:
  agentcli-release archive <tool-dir> [--out <dir>] [--tag v<version>] [--target <platform>-<arch>] [--repository <owner/repo> [--workflow <path>]]
  agentcli-release preflight <tool-dir> [--tag v<version>] [--repository <owner/repo> [--workflow <path>]]
  agentcli-release checksums <dir> [--expect <platform>-<arch>,...]
  agentcli-release verify <dir> --repository <owner/repo> --tag v<version> [--workflow <path>] [--trusted-root <file>]
  agentcli-release verify-npm <name>@<version> --repository <owner/repo> [--workflow <path>] [--registry <url>]`

const VALUED = new Set([
  '--out',
  '--tag',
  '--target',
  '--expect',
  '--repository',
  '--workflow',
  '--trusted-root',
  '--registry',
])

function parse(argv: string[]): { positional: string[]; flags: Record<string, string> } {
  const positional: string[] = []
  const flags: Record<string, string> = {}
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (VALUED.has(a)) {
      const value = argv[++i]
      if (value === undefined) throw new Error(`${a} needs a value`)
      flags[a.slice(2)] = value
    } else if (a.startsWith('-')) throw new Error(`unknown option ${a}`)
    else positional.push(a)
  }
  return { positional, flags }
}

/**
 * `agentcli-release`: the steps of a release that run on a CI runner — check a tool before anything is published,
 * stage and archive it for this platform,
 * write `checksums.txt` over all platforms' archives, verify a signed release exactly as `update` will. Progress
 * goes to stderr; the result (JSON) is returned for the bin to print. Exit 2 on usage, 1 on any failure.
 */
export async function main(argv: string[]): Promise<{ code: number; result?: unknown }> {
  const log = (line: string) => process.stderr.write(`agentcli-release: ${line}\n`)
  let command: string | undefined
  let args: ReturnType<typeof parse>
  try {
    command = argv[0]
    args = parse(argv.slice(1))
    if (args.positional.length !== 1) throw new Error('expected one directory')
  } catch (error) {
    log(`${(error as Error).message}\n${USAGE}`)
    return { code: 2 }
  }
  const [dir] = args.positional as [string]
  const { flags } = args
  try {
    const checks = {
      toolDir: dir,
      tag: flags.tag,
      target: flags.target,
      signer: flags.repository
        ? { repository: flags.repository, workflow: flags.workflow ?? '.github/workflows/release.yml' }
        : undefined,
    }
    if (command === 'archive')
      return { code: 0, result: await archiveTool({ ...checks, outDir: flags.out ?? 'dist-release', log }) }
    if (command === 'preflight') {
      const { pjson, bin } = preflight(checks)
      return { code: 0, result: { name: pjson.name, version: pjson.version, bin } }
    }
    if (command === 'checksums') {
      const expect = flags.expect?.split(',').filter(Boolean)
      return { code: 0, result: writeChecksums(dir, expect ? { expect } : {}) }
    }
    if (command === 'verify') {
      if (!flags.repository || !flags.tag) throw new Error('verify needs --repository and --tag')
      return {
        code: 0,
        result: await verifyRelease({
          dir,
          repository: flags.repository,
          tag: flags.tag,
          workflow: flags.workflow ?? '.github/workflows/release.yml',
          trustedRoot: flags['trusted-root'],
        }),
      }
    }
    if (command === 'verify-npm') {
      const match = /^(@?[^@]+)@(.+)$/.exec(dir)
      if (!match || !flags.repository) throw new Error('verify-npm needs <name>@<version> and --repository')
      return {
        code: 0,
        result: await verifyPublished({
          name: match[1]!,
          version: match[2]!,
          repository: flags.repository,
          workflow: flags.workflow ?? '.github/workflows/release.yml',
          registry: flags.registry,
          trustedRoot: flags['trusted-root'],
        }),
      }
    }
    log(`unknown command ${command ?? '(none)'}\n${USAGE}`)
    return { code: 2 }
  } catch (error) {
    const reason = (error as { details?: { reason?: string } }).details?.reason
    log(`${command}: ${(error as Error).message}${reason ? ` (${reason})` : ''}`)
    return { code: 1 }
  }
}
