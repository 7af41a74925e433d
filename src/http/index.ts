/** The http barrel (internal: not an entry point of the package): the upstream client and its mapping to the catalogue. */
export { type HttpClient, type HttpOptions, type HttpResponse, httpClient, type RequestOptions } from './client.js'
export { codeForStatus, errorForFailure, errorForResponse, retryAfterSeconds } from './status.js'
