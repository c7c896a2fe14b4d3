/**
 * The invariants auth checks itself (the gateway validates shapes; these hold whoever calls):
 * email and password rules, and who the caller must be.
 */
import { AppError, isLoginEmail, normalizeEmail, ROLES, type CallContext, type Principal, type Problem, type Role } from '@reelbase/lib-platform';

/** The login address rules, kept in lib-platform (records applies them to imported Users). */
export { isLoginEmail, normalizeEmail };

export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 1024;

export interface RegistrationInput {
  email: string;
  password: string;
  name: string;
  role?: string;
}

/** Every problem with a registration, all at once (empty when it is valid). */
export function registrationProblems(input: RegistrationInput): Problem[] {
  const problems: Problem[] = [];
  const email = normalizeEmail(input.email);
  if (!input.email) problems.push({ loc: ['email'], msg: 'Field required', type: 'missing' });
  else if (!isLoginEmail(email)) {
    problems.push({ loc: ['email'], msg: 'value is not a valid email address', type: 'value_error' });
  }
  problems.push(...passwordProblems(input.password, 'password'));
  if (!input.name.trim()) problems.push({ loc: ['name'], msg: 'Field required', type: 'missing' });
  if (input.role !== undefined && !ROLES.includes(input.role as Role)) {
    problems.push({ loc: ['role'], msg: `Input should be ${ROLES.map((r) => `'${r}'`).join(', ')}`, type: 'enum' });
  }
  return problems;
}

/** The password rules of registration, for the field named `field` (empty when it is valid). */
export function passwordProblems(password: string, field: string): Problem[] {
  if (password.length < MIN_PASSWORD_LENGTH) {
    return [{ loc: [field], msg: `String should have at least ${MIN_PASSWORD_LENGTH} characters`, type: 'string_too_short' }];
  }
  if (password.length > MAX_PASSWORD_LENGTH) {
    return [{ loc: [field], msg: `String should have at most ${MAX_PASSWORD_LENGTH} characters`, type: 'string_too_long' }];
  }
  return [];
}

/** The calling user (login token or API key); anyone else is `unauthenticated`. */
export function requireUser(ctx: CallContext): Principal {
  const p = ctx.principal;
  if (!p || !p.userId || (p.authKind !== 'token' && p.authKind !== 'api_key')) {
    throw new AppError('unauthenticated', 'authentication required');
  }
  return p;
}

export function isAdmin(p: Principal | undefined): boolean {
  return !!p && !!p.userId && p.role === 'Admin' && (p.authKind === 'token' || p.authKind === 'api_key');
}

/** The calling user, who must be an Admin. */
export function requireAdmin(ctx: CallContext): Principal {
  const p = requireUser(ctx);
  if (!isAdmin(p)) throw new AppError('forbidden', 'only an Admin may do this');
  return p;
}
