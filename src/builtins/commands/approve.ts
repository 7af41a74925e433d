import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { APPROVAL_NAMESPACE, decodeRequest } from '../../approvals/request.js'
import { fingerprint, parseSignature } from '../../approvals/sshsig.js'
import { fileApprovalStore } from '../../approvals/store.js'
import { AgentCommand, AgentError, Args, Flags, output, usageError, validationError } from '../../index.js'

const approvalSchema = output((z) =>
  z.object({
    request_id: z.string(),
    command: z.string(),
    target_count: z.number().int(),
    targets: z.array(z.string()),
    expires_at: z.string(),
    signer: z.string(),
    signature: z.string(),
    filed: z.boolean(),
  }),
)

/** The built-in `approve`: Approve a change the policy holds, with your SSH key. */
export default class Approve extends AgentCommand<typeof approvalSchema> {
  static override kind = 'local' as const
  static override summary = 'Approve a change the policy holds, with your SSH key'
  static override description =
    'For a person, not an agent: signs an approval request (data.approval.request) with your ssh ed25519 key, or files a signature made with ssh-keygen -Y sign. It counts only from an approver the policy lists, for exactly the change signed.'
  static override examples = ['<%= config.bin %> approve <request> --key ~/.ssh/id_ed25519']
  static override args = { request: Args.string({ required: true, description: 'The approval request (ar1.…).' }) }
  static override flags = {
    key: Flags.string({ description: 'Your ssh ed25519 private key.' }),
    signature: Flags.string({ description: 'A file with an ssh-keygen -Y sign signature.' }),
  }
  static override errorCodes = ['E_IO'] as const
  static override output = approvalSchema

  async execute() {
    const { args, flags } = await this.parse(Approve)
    const prepared = decodeRequest(args.request)
    if (!prepared) throw validationError('not an approval request', 'ar1.<base64url>', args.request.slice(0, 16))
    if ((flags.key === undefined) === (flags.signature === undefined))
      throw usageError('give exactly one of --key or --signature', { got: Object.keys(flags) })
    const armored = flags.key ? sign(flags.key, prepared.bytes) : readSignature(flags.signature!)
    const sig = parseSignature(armored)
    if (!sig || sig.namespace !== APPROVAL_NAMESPACE)
      throw validationError(`not an ssh ed25519 signature in the ${APPROVAL_NAMESPACE} namespace`, 'SSHSIG', null)
    // Filed where the requester confirms: the fleet's shared store when a state URL is set, else this machine.
    const fleet = (await this.fleetBackend())?.primitives
    const store = fleet
      ? (await import('../../fleet/ledgers.js')).sharedApprovalStore(fleet)
      : fileApprovalStore(this.config.dataDir)
    await store.add(prepared.id, armored)
    const r = prepared.request
    return {
      request_id: prepared.id,
      command: r.command.replaceAll(':', ' '),
      target_count: r.target_count,
      targets: r.targets.map(([id]) => id),
      expires_at: r.expires_at,
      signer: fingerprint(sig.publicKey),
      signature: armored,
      filed: true,
    }
  }
}

/** Sign with the person's own key through ssh-keygen (which may ask for its passphrase on the terminal). */
function sign(key: string, bytes: Buffer): string {
  try {
    return execFileSync('ssh-keygen', ['-Y', 'sign', '-f', key, '-n', APPROVAL_NAMESPACE], {
      input: bytes,
      stdio: ['pipe', 'pipe', 'inherit'],
    }).toString('utf8')
  } catch (error) {
    throw new AgentError('E_IO', `ssh-keygen could not sign with ${key}`, {
      details: { path: key, fix: 'check the key path (an ssh ed25519 private key) and that ssh-keygen is installed' },
      cause: error,
    })
  }
}

function readSignature(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    throw new AgentError('E_IO', `cannot read ${path}`, { details: { path } })
  }
}
