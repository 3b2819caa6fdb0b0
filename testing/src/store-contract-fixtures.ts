/** What the store contract's sections share: the documents they store and their assertions. */
import { type Collection, type Doc, DuplicateKeyError, isDuplicateKeyError, type Store } from "@kiln/kit/store";
import { expect } from "vitest";

/** The backend under test, read once the suite's beforeAll has made it. */
export interface StoreUnderTest {
  readonly store: Store;
  /** A collection seeded with `docs`. */
  seeded<T extends Doc>(collection: string, docs: T[]): Promise<Collection<T>>;
}

export interface Item extends Doc {
  name?: string | null;
  n?: number | null;
  tags?: string[];
  owner?: { id: string; role?: string };
  at?: Date;
}

export interface Job extends Doc {
  status: "queued" | "running" | "done";
  priority: number;
  worker?: string;
  attempts?: number;
}

export interface Account extends Doc {
  email?: string;
  team?: string;
  org?: string;
  handle?: string;
  createdAt?: Date;
  logins?: number;
}

/** Resolves to the error a promise rejects with; fails the test if it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  throw new Error("expected a rejection");
}

export async function expectDuplicateKey(promise: Promise<unknown>): Promise<void> {
  const e = await rejectionOf(promise);
  expect(e).toBeInstanceOf(DuplicateKeyError);
  expect(isDuplicateKeyError(e) && e.code).toBe(11000);
}

export const ids = (docs: Doc[]) => docs.map((d) => d._id);
