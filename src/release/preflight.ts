import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { readinessFixes, releaseReadiness } from '../describe/readiness.js'
import { nonRegistryDependencies } from './_specs.js'

/** The parts of a tool's package.json a release reads. */
export type ToolPackage = {
  agentcli?: { update?: { repository?: string; workflow?: string }; release_readiness?: Record<string, unknown> }
  name: string
  version: string
  bin?: string | Record<string, string>
  oclif?: { bin?: string }
  dependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
  devDependencies?: Record<string, string>
}

/** What a release of a tool must agree with. */
export type PreflightOptions = {
  toolDir: string
  /** The git tag being released: must be `v<version>`. */
  tag?: string | undefined
  /** The expected target (`linux-x64` …): must be this machine's. */
  target?: string | undefined
  /** The repository (and workflow) that will sign the release: must be what the tool's `update` expects. */
  signer?: { repository: string; workflow: string } | undefined
}

/** The platform this process runs on, in the archive's naming. */
export const hostTarget = () => `${process.platform}-${process.arch}`

/** A release signed by another repository or workflow than the tool declares would be refused by its `update`. */
function checkDeclaredSigner(pjson: ToolPackage, signer: { repository: string; workflow: string }): void {
  const declared = pjson.agentcli?.update ?? {}
  const workflow = (declared.workflow ?? '.github/workflows/release.yml').replace(/^\//, '')
  if (declared.repository !== signer.repository || workflow !== signer.workflow.replace(/^\//, ''))
    throw new Error(
      `the tool's update expects releases signed by ${declared.repository ?? '(no repository)'} ${workflow}, ` +
        `but ${signer.repository} ${signer.workflow} signs this one: set "agentcli": {"update": {"repository", "workflow"}}`,
    )
}

/**
 * The release gate (spec 002 §13): a tool whose readiness is unpublishable (declared so, FCC not verified, mock
 * upstream missing) is not released, whatever its tests say; the reason and what would make it releasable are named.
 */
function checkReleasable(pjson: ToolPackage): void {
  const settings = (pjson.agentcli ?? {}) as Parameters<typeof releaseReadiness>[0]
  const readiness = releaseReadiness(settings)
  if (readiness.level !== 'unpublishable') return
  const fixes = readinessFixes(settings)
  throw new Error(
    `${pjson.name} ${pjson.version} is unpublishable (${readiness.reason}): not released${fixes.length ? `; ${fixes.join('; ')}` : ''}`,
  )
}

/**
 * Everything that can be known wrong before anything is built or published: the tool is releasable, the tag is `v<version>`, the target
 * is this machine, the signer is the identity the tool's `update` expects, every runtime dependency comes from
 * the registry, and the tool is built.
 */
export function preflight(options: PreflightOptions): {
  toolDir: string
  pjson: ToolPackage
  bin: string
  target: string
} {
  const toolDir = resolve(options.toolDir)
  const pjson = JSON.parse(readFileSync(join(toolDir, 'package.json'), 'utf8')) as ToolPackage
  const bin = pjson.oclif?.bin ?? (typeof pjson.bin === 'object' ? Object.keys(pjson.bin)[0] : pjson.name)
  if (!bin || !pjson.version) throw new Error(`${toolDir}/package.json names no bin or version`)
  if (options.tag !== undefined && options.tag !== `v${pjson.version}`)
    throw new Error(`tag ${options.tag} is not v${pjson.version}, the version in ${toolDir}/package.json`)
  const target = hostTarget()
  if (options.target !== undefined && options.target !== target)
    throw new Error(`cannot build ${options.target} on ${target}: build each platform's archive on its own runner`)
  if (options.signer) checkDeclaredSigner(pjson, options.signer)
  checkReleasable(pjson)
  const local = nonRegistryDependencies(pjson)
  if (local.length > 0)
    throw new Error(`dependencies that do not come from the registry cannot be installed from it: ${local.join(', ')}`)
  if (!existsSync(join(toolDir, 'oclif.manifest.json')))
    throw new Error(`${toolDir} is not built (no oclif.manifest.json): run agentcli-build first`)
  return { toolDir, pjson, bin, target }
}
