/**
 * One server's list of one kind (its tools, its prompts) as troupe last had it answered
 * (spec/tools.md §7). A server says `notifications/<kind>/list_changed`, and only that server is
 * listed again; a listing that fails keeps the items it had. Until 2026-12-06 one server's
 * notification listed every server again, and one whose listing failed at that moment lost all
 * its tools (or prompts) until the next listing.
 */
export class ServerList<T> {
  private current: readonly T[] = [];
  /** The number of the latest listing asked for, and of the one whose answer `items` are. */
  private asked = 0;
  private answered = 0;

  get items(): readonly T[] {
    return this.current;
  }

  /**
   * Lists again. The latest listing wins: listings may overlap (two notifications close together)
   * and answer out of order, and an answer older than one already taken is dropped (resolves
   * false; true when taken). Until 2026-12-06 whichever answered last was taken, so an older list
   * could replace a newer one. Rejects with the listing's failure, the items kept.
   */
  async refresh(list: () => Promise<T[]>): Promise<boolean> {
    const number = ++this.asked;
    const items = await list();
    if (number < this.answered) return false;
    this.answered = number;
    this.current = items;
    return true;
  }
}
