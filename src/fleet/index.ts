/** The fleet barrel (internal: not an entry point of the package): the state of writes (ledger, idempotency, jobs, checkpoints, audit) on PostgreSQL or Redis. */
export { closeBackends, openBackend } from './backend.js'
export { type StateCheck, stateCheck } from './doctor.js'
export { recordedInDoubt, storeFailed } from './errors.js'
export { injectedSecretSource, MIN_KEY_BYTES, parseKeyRing } from './key-ring.js'
export { MARKER_MARGIN_MS, type SharedPrimitives, sharedIdempotencyLedger, sharedTokenLedger } from './ledgers.js'
export { redactUrl, type StateLocation, type StateSettings, stateLocation, stateSettings } from './location.js'
export { serveJobs } from './serve.js'
export {
  type BackendHealth,
  type FleetBackend,
  type FleetCheckpoints,
  type FleetJobStore,
  SCHEMA_VERSION,
} from './types.js'
