// Real SSH ed25519 keys made by ssh-keygen at test time, and signatures made by it, for the approval tests.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A key pair on disk: the private key's path and the public key line. */
export type SshKey = { path: string; pub: string }

/** A temp dir of keys, removed by `dispose()`. */
export function sshKeys(): { make(name: string): SshKey; dir: string; dispose(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'agentcli-ssh-'))
  return {
    dir,
    make(name) {
      const path = join(dir, name)
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', path])
      return { path, pub: readFileSync(`${path}.pub`, 'utf8').trim() }
    },
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  }
}

/** `ssh-keygen -Y sign` over `bytes` in `namespace`: the armored signature. */
export function sshSign(key: SshKey, bytes: Buffer, namespace = 'agentcli-approval'): string {
  return execFileSync('ssh-keygen', ['-Y', 'sign', '-f', key.path, '-n', namespace], {
    input: bytes,
    stdio: ['pipe', 'pipe', 'ignore'],
  }).toString('utf8')
}

/**
 * Make `box`'s example tool trust one approver (an operator policy naming a fresh key), before any dry-run; the
 * returned `approve(request)` files that approver's signature over a dry-run's `data.approval.request`, as
 * `tasks approve --signature` would (in-process: a request for a large batch is a long word).
 */
export function approverFor(configDir: string, dataDir: string): { approve(request: string): Promise<void> } {
  const keys = sshKeys()
  const alice = keys.make('alice')
  mkdirSync(configDir, { recursive: true, mode: 0o700 })
  writeFileSync(join(configDir, 'policy.json'), JSON.stringify({ approvers: [{ id: 'alice', key: alice.pub }] }), {
    mode: 0o600,
  })
  return {
    async approve(request) {
      const { decodeRequest } = await import('../../src/approvals/request.js')
      const { fileApprovalStore } = await import('../../src/approvals/store.js')
      const prepared = decodeRequest(request)
      if (!prepared) throw new Error('not an approval request')
      await fileApprovalStore(dataDir).add(prepared.id, sshSign(alice, prepared.bytes))
      keys.dispose()
    },
  }
}
