/**
 * The major of the agentcli contract this framework implements (the envelope, the universal flags, the error
 * catalogue's meaning, the self-description commands). `reference` and `context` report it so a client can pin a
 * compatibility floor (seed 001 §3); it changes only on a break of that contract, never with a tool's version.
 */
export const CONTRACT_VERSION = 1
