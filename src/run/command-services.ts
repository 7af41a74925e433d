import type { Checkpoint, HumanRequest } from '../checkpoints/checkpoint.js'
import type { Credentials, StorageMode } from '../credentials/credentials.js'
import type { CredentialRecord } from '../credentials/types.js'
import { AgentError } from '../errors/agent-error.js'
import type { FleetBackend } from '../fleet/types.js'
import type { HttpClient } from '../http/client.js'
import { createProgress, type Progress, type ProgressOptions, SILENT_PROGRESS } from '../output/progress.js'
import { writeStderr } from '../output/stderr.js'
import { BaseCommand } from '../runtime/base-command.js'
import { remoteSubject } from '../settings/caller.js'
import { toolEnv } from '../settings/tool-env.js'
import type { Globals } from '../universal-flags/globals.js'
import { claimResume, completeResume, fleetBackendOf, humanRequired } from './checkpoints.js'
import { openCredentialStore, usableCredential } from './credentials.js'
import type { Question } from './prompt.js'
import { type UpstreamOptions, upstreamClient } from './upstream.js'

/**
 * What a command can ask for besides its input and output: lines, progress and questions for people (stderr and
 * the terminal, never stdout), credentials, an upstream client, human checkpoints, the fleet's store.
 * `AgentCommand` extends it (authors use these through `AgentCommand`); each method is thin over its module,
 * which loads only when called.
 */
export abstract class CommandServices extends BaseCommand {
  /**
   * Declared here as well as on `BaseCommand` because oclif's manifest collects statics up the class chain only
   * while each class has one of its own: without one this class would hide the base's (`strict`,
   * `enableJsonFlag`) from every command's manifest entry.
   */
  static override enableJsonFlag = false
  private readonly credentialStores = new Map<StorageMode | undefined, Credentials>()
  private readonly checkpointClaims: Array<() => Promise<void>> = []

  /** Aborted when the process receives SIGINT/SIGTERM; pass it to anything long-running. */
  protected abstract get signal(): AbortSignal
  /** The universal flags of this call. */
  protected abstract get globals(): Globals

  /** A line for people on stderr; silenced by `--quiet`. */
  override log(message = '', ...args: unknown[]): void {
    if (!this.globals.quiet) writeStderr(`${[message, ...args].join(' ')}\n`)
  }

  /** Warnings go to stderr, never stdout; silenced by `--quiet`. */
  override warn(input: string | Error): string | Error {
    if (!this.globals.quiet) writeStderr(`warning: ${input instanceof Error ? input.message : input}\n`)
    return input
  }

  /**
   * Show a person how long work is going: a bar on stderr when it is a terminal, a plain line every few seconds
   * when it is not, nothing under `--quiet`; never anything on stdout. Call `done()` when the work ends.
   */
  protected progress(options: ProgressOptions): Progress {
    // A stream printing rows to the same terminal would have its rows cut by the redrawn bar.
    if ((this.constructor as { stream?: boolean }).stream && process.stdout.isTTY && process.stderr.isTTY)
      return SILENT_PROGRESS
    return createProgress(options, { quiet: this.globals.quiet })
  }

  /**
   * Ask a person a question on the terminal. Off a terminal or under `--no-input` it never waits: it is `E_USAGE`
   * naming `question.flag`, the flag that answers it (every question must have one).
   */
  protected async ask(question: Question): Promise<string> {
    const { ask } = await import('./prompt.js')
    return ask(question, this.globals.noInput)
  }

  /** Stop for a person: persist a checkpoint and throw `E_HUMAN_REQUIRED` (exit 9) with `details.resume`. */
  protected async requireHuman<S>(request: HumanRequest<S>): Promise<never> {
    throw await humanRequired(await this.fleetBackend(), this.config.dataDir, this.id!, request, this.checkpointOwner())
  }

  /**
   * Claim the checkpoint a resume command continues from, for this call only (`E_NOT_FOUND` if unknown,
   * `E_CONFLICT` if expired, used, or being resumed by another process). Unless the command completes it
   * (`completeCheckpoint`), the claim is handed back when the command ends.
   */
  protected async resumeCheckpoint<S>(id: string, command: string): Promise<Checkpoint<S>> {
    const claimed = await claimResume<S>(
      await this.fleetBackend(),
      this.config.dataDir,
      id,
      command,
      this.checkpointOwner(),
    )
    if (claimed.release) this.checkpointClaims.push(claimed.release)
    return claimed.checkpoint
  }

  /** Who owns the checkpoints this call starts or resumes: its remote subject (`tool mcp --http`), if any. */
  private checkpointOwner(): string | undefined {
    const subject = remoteSubject(toolEnv(this.config.bin))
    return subject ? JSON.stringify(subject) : undefined
  }

  /** oclif's last step, on success and failure alike: hand back checkpoint claims this call still holds. */
  override async finally(error: Error | undefined): Promise<unknown> {
    for (const release of this.checkpointClaims.splice(0)) await release().catch(() => {})
    return super.finally(error)
  }

  /** Complete the checkpoint a resume continued from: a resume works once (on a fleet, once across machines). */
  protected async completeCheckpoint(id: string): Promise<void> {
    return completeResume(await this.fleetBackend(), this.config.dataDir, id)
  }

  /** The fleet's state store when a state URL is set (`<BIN>_STATE_URL`), else undefined: no driver loads. */
  protected async fleetBackend(): Promise<FleetBackend | undefined> {
    return fleetBackendOf(this.config)
  }

  /**
   * The tool's credential store (env → keychain → file): read, save, remove, status. `mode` comes from the caller
   * (login's --insecure-storage or --require-keychain), else `<BIN>_CREDENTIAL_STORE`, else
   * `agentcli.credentials.storage` in package.json. For the current, refreshed credential use
   * {@link AgentCommand.credential}.
   */
  protected async credentialStore(mode?: StorageMode): Promise<Credentials> {
    // One instance per mode for the life of the command: its keychain entries (each a D-Bus connection) are reused.
    const cached = this.credentialStores.get(mode)
    if (cached) return cached
    const store = await openCredentialStore(this.config, mode, (m) => this.warn(m))
    this.credentialStores.set(mode, store)
    return store
  }

  /** @deprecated Renamed {@link AgentCommand.credentialStore}: one letter from `credential()` was one too few. */
  protected credentials(mode?: StorageMode): Promise<Credentials> {
    return this.credentialStore(mode)
  }

  /**
   * A usable credential of the current account: refreshed through {@link AgentCommand.refreshCredential} when it
   * expires within `skewSeconds`. Missing, or expired and not refreshable, is `E_AUTH` naming the login command.
   */
  protected async credential(options: { skewSeconds?: number; force?: boolean } = {}): Promise<CredentialRecord> {
    return usableCredential(await this.credentialStore(), this.config.bin, options, (r) => this.refreshCredential(r))
  }

  /** Exchange a refresh token for a new record. Tools that can refresh override this; by default it cannot. */
  protected async refreshCredential(_record: CredentialRecord): Promise<CredentialRecord> {
    throw new AgentError('E_AUTH', `${this.config.bin} cannot refresh credentials`)
  }

  /**
   * An HTTP client for an upstream API: bearer token from {@link AgentCommand.credential} (when `auth` is
   * true), one refresh and retry on 401, the command's cancellation signal, failures mapped to the catalogue.
   */
  protected async upstream(options: UpstreamOptions): Promise<HttpClient> {
    return upstreamClient(this.config, options, this.signal, {
      token: async () => (await this.credential()).access_token,
      refresh: async () => (await this.credential({ force: true })).access_token,
    })
  }
}
