import { errors } from 'jose';
import { TokenRefused } from './principal.js';

function describeClaimFailure(error: errors.JWTClaimValidationFailed): string {
  if (error.claim === 'exp') {
    return error.reason === 'missing' ? 'The bearer token has no expiry (exp)' : 'The bearer token is malformed';
  }
  if (error.claim === 'nbf') {
    return error.reason === 'check_failed' ? 'The bearer token is not valid yet' : 'The bearer token is malformed';
  }
  if (error.claim === 'iss') return 'The bearer token is from another issuer';
  if (error.claim === 'aud') return 'The bearer token is for another audience';
  return 'The bearer token is malformed';
}

/**
 * Why a token was refused, in words a client may see: never the token, never a key. Anything jose throws,
 * including a TypeError for a key that does not fit the algorithm, is a refused token (401), not a failure (500).
 */
export function describeFailure(error: unknown): string {
  if (error instanceof TokenRefused) return error.message;
  if (error instanceof errors.JWTExpired) return 'The bearer token has expired';
  if (error instanceof errors.JWTClaimValidationFailed) return describeClaimFailure(error);
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'The bearer token has an invalid signature';
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return 'The bearer token is signed with an algorithm that is not accepted';
  }
  if (error instanceof errors.JOSENotSupported) {
    return error.message.includes('Extension Header Parameter')
      ? 'The bearer token names a critical header parameter (crit) the service does not understand'
      : 'The bearer token is signed with an algorithm that is not accepted';
  }
  if (error instanceof errors.JWKSNoMatchingKey) {
    return "No key of the identity provider fits the bearer token's key id (kid) and algorithm";
  }
  if (error instanceof errors.JWKSMultipleMatchingKeys) {
    return 'The bearer token names no key id (kid) and the identity provider has several keys for its algorithm';
  }
  if (error instanceof errors.JWSInvalid && error.message.includes('crit')) {
    return 'The bearer token names a critical header parameter (crit) the service does not understand';
  }
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) return 'The bearer token is malformed';
  if (error instanceof TypeError && /key|algorithm/i.test(error.message)) {
    return 'The bearer token is signed with an algorithm that is not accepted';
  }
  return 'The bearer token is invalid';
}
