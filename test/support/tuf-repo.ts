import { createHash, generateKeyPairSync, type KeyObject, sign } from 'node:crypto'
import { Key, Metadata, MetaFile, Root, Signature, Snapshot, TargetFile, Targets, Timestamp } from '@tufjs/models'
import { HttpResponse, http, type RequestHandler } from 'msw'

/** A signing key of a TUF role. */
type Pair = { key: Key; privateKey: KeyObject }

function keyPair(): Pair {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const meta = {
    keyType: 'ecdsa-sha2-nistp256',
    scheme: 'ecdsa-sha2-nistp256',
    keyVal: { public: publicKey.export({ format: 'pem', type: 'spki' }).toString() },
  }
  const keyID = createHash('sha256').update(JSON.stringify(meta)).digest('hex')
  return { key: new Key({ keyID, ...meta }), privateKey }
}

const signer = (pair: Pair) => (data: Buffer) =>
  new Signature({ keyID: pair.key.keyID, sig: sign('sha256', data, pair.privateKey).toString('hex') })

const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().replace(/\.\d+Z$/, 'Z')

const metaFile = (json: string, version: number) =>
  new MetaFile({ version, length: json.length, hashes: { sha256: createHash('sha256').update(json).digest('hex') } })

/** What a test may break in the served repository. */
export type TufFaults = {
  /** Serve a trusted_root.json other than the one targets.json signs. */
  tamperTarget?: boolean
  /** Sign timestamp.json with a key the root does not list. */
  foreignTimestampKey?: boolean
  /** Publish metadata that expired yesterday. */
  expired?: boolean
  /** Publish a 2.root.json signed only by a key the current root does not trust. */
  rogueRootRotation?: boolean
}

/**
 * A TUF repository in memory, in the layout @sigstore/tuf reads (`<mirror>/timestamp.json`, `snapshot.json`,
 * `targets.json`, `<n>.root.json`, `targets/trusted_root.json`), signed with throw-away keys. `rootJson` is the
 * trust anchor a tool ships (`tuf_root`); `handlers` serve the repository under `prefix` on a loopback upstream.
 */
export type TufRepo = {
  rootJson: string
  handlers: RequestHandler[]
  requests: string[]
  republish(nextRoot: unknown, faults?: TufFaults): void
}

export function createTufRepo(trustedRoot: unknown, prefix = '/tuf'): TufRepo {
  const root = keyPair()
  const online = keyPair()
  const rootMeta = new Metadata(
    new Root({ version: 1, specVersion: '1.0.0', expires: inDays(365), consistentSnapshot: false }),
  )
  for (const role of ['root', 'timestamp', 'snapshot', 'targets'])
    rootMeta.signed.addKey(role === 'root' ? root.key : online.key, role)
  rootMeta.sign(signer(root))
  const rootJson = JSON.stringify(rootMeta.toJSON())

  function publish(target: string, faults: TufFaults, version: number) {
    const expires = inDays(faults.expired ? -1 : 30)
    const targets = new Metadata(new Targets({ version, specVersion: '1.0.0', expires }))
    targets.signed.addTarget(
      new TargetFile({
        path: 'trusted_root.json',
        length: target.length,
        hashes: { sha256: createHash('sha256').update(target).digest('hex') },
      }),
    )
    targets.sign(signer(online))
    const targetsJson = JSON.stringify(targets.toJSON())
    const snapshot = new Metadata(
      new Snapshot({
        version,
        specVersion: '1.0.0',
        expires,
        meta: { 'targets.json': metaFile(targetsJson, version) },
      }),
    )
    snapshot.sign(signer(online))
    const snapshotJson = JSON.stringify(snapshot.toJSON())
    const timestamp = new Metadata(
      new Timestamp({ version, specVersion: '1.0.0', expires, snapshotMeta: metaFile(snapshotJson, version) }),
    )
    timestamp.sign(signer(faults.foreignTimestampKey ? keyPair() : online))
    let rotation: string | undefined
    if (faults.rogueRootRotation) {
      const rogue = keyPair()
      const next = new Metadata(
        new Root({ version: 2, specVersion: '1.0.0', expires: inDays(365), consistentSnapshot: false }),
      )
      for (const role of ['root', 'timestamp', 'snapshot', 'targets']) next.signed.addKey(rogue.key, role)
      next.sign(signer(rogue))
      rotation = JSON.stringify(next.toJSON())
    }
    return {
      'timestamp.json': JSON.stringify(timestamp.toJSON()),
      'snapshot.json': snapshotJson,
      'targets.json': targetsJson,
      'targets/trusted_root.json': faults.tamperTarget ? target.replace('}', ', "tampered": true}') : target,
      ...(rotation ? { '2.root.json': rotation } : {}),
    } as Record<string, string>
  }

  let version = 1
  let files = publish(JSON.stringify(trustedRoot), {}, version)
  const requests: string[] = []
  const handlers: RequestHandler[] = [
    http.get(`*${prefix}/*`, ({ request }) => {
      const name = new URL(request.url).pathname.slice(prefix.length + 1)
      requests.push(name)
      const body = files[name]
      return body === undefined ? new HttpResponse('not found', { status: 404 }) : new HttpResponse(body)
    }),
  ]
  return {
    rootJson,
    handlers,
    requests,
    /** Publish a new version of the repository (a new trusted root, or a fault). */
    republish(nextRoot: unknown, faults: TufFaults = {}) {
      version++
      files = publish(JSON.stringify(nextRoot), faults, version)
    },
  }
}
