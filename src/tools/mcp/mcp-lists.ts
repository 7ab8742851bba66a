/**
 * One server's list of one kind (its tools, its prompts) as troupe last had it answered
 * (spec/tools.md §7). A server says `notifications/<kind>/list_changed`, and only that server is
 * listed again; a listing that fails keeps the items it had. Until 2026-12-06 one server's
 * notification listed every server again, and one whose listing failed at that moment lost all
 * its tools (or prompts) until the next listing.
 */
export class ServerList<T> {
  private current: readonly T[] = [];
  /** The listing asked for and not yet answered, if one is. */
  private running: Promise<boolean> | undefined;
  /** The listing that starts when the running one ends, once a change was said during it. */
  private queued: Promise<boolean> | undefined;

  get items(): readonly T[] {
    return this.current;
  }

  /**
   * Lists again, one listing at a time. A refresh asked while a listing runs queues one more, to
   * start when it ends (the running one may have been answered before the change); any asked
   * while one is queued are folded into it, as it starts after them. So a server that floods
   * `list_changed` costs at most one listing in flight and one queued, and the list troupe ends
   * with is one the server made after its last notification. (Until 2026-12-07 each refresh
   * listed at once: a server sending 1000 notifications had 1000 listings run together, each up
   * to MAX_LIST_ITEMS and MAX_LIST_BYTES kept in memory.)
   * Resolves true once this refresh's listing is taken; false when it was folded into one already
   * queued (whose own refresh tells of it). Rejects with the listing's failure, the items kept.
   */
  refresh(list: () => Promise<T[]>): Promise<boolean> {
    if (this.queued) return Promise.resolve(false);
    if (!this.running) return this.run(list);
    const queued = this.running.then(settled, settled).then(() => {
      this.queued = undefined;
      return this.run(list);
    });
    this.queued = queued;
    return queued;
  }

  private run(list: () => Promise<T[]>): Promise<boolean> {
    const running = Promise.resolve()
      .then(list)
      .then((items) => {
        this.current = items;
        return true;
      });
    this.running = running;
    const ended = () => {
      if (this.running === running) this.running = undefined;
    };
    running.then(ended, ended);
    return running;
  }
}

const settled = () => undefined;
