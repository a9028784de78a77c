/**
 * The steps this process executes at once (`engine.workers`), shared by the step messages it pulls
 * from JetStream and the steps it claims eagerly in the transaction that scheduled them.
 */
export class Slots {
  readonly limit: number;
  #active = 0;
  #wanting = 0;
  #waiters: (() => void)[] = [];

  constructor(limit: number) {
    this.limit = limit;
  }

  /** How many callers of `take` wait for a slot (one woken up still counts until it has one). */
  get waiting(): number {
    return this.#wanting;
  }

  /** Waits for a free slot and takes it. */
  async take(): Promise<Slot> {
    if (this.#active < this.limit) return this.#hold();
    this.#wanting++;
    try {
      while (this.#active >= this.limit) await new Promise<void>((r) => this.#waiters.push(r));
    } finally {
      this.#wanting--;
    }
    return this.#hold();
  }

  /** Takes a free slot now, or undefined when every slot is taken. */
  tryTake(): Slot | undefined {
    return this.#active < this.limit ? this.#hold() : undefined;
  }

  #hold(): Slot {
    this.#active++;
    let held = true;
    return {
      free: () => {
        if (!held) return;
        held = false;
        this.#active--;
        this.#waiters.shift()?.();
      },
    };
  }
}

/** One taken slot; `free` gives it back (a second call does nothing). */
export interface Slot {
  free(): void;
}
