/**
 * The conflicts and problems the schema rules report (docs/api-notes.md, Errors).
 */
import { AppError, type Problem } from '@reelbase/lib-platform';

export const duplicate = (what: string, code: string): AppError => AppError.conflict('duplicate_code', `${what} ${code} already exists`);

export const builtin = (what: string, code: string): AppError => AppError.conflict('builtin', `${what} ${code} is built in: it cannot be deleted or renamed`);

export const inUse = (what: string, code: string, usage: number): AppError =>
  AppError.conflict('code_in_use', `${what} ${code} is still used by ${usage} record${usage === 1 ? '' : 's'}`, { usage });

export const notFound = (what: string, code: string): AppError => AppError.notFound(`${what} ${code} does not exist`);

/** Collects 422 problems and throws them together. */
export class Problems {
  private readonly list: Problem[] = [];

  add(loc: (string | number)[], msg: string, type = 'value_error'): void {
    this.list.push({ loc: ['body', ...loc], msg, type });
  }

  throwIfAny(): void {
    if (this.list.length) throw AppError.invalid(this.list);
  }
}
