/**
 * Unique delivery and roadblocks across the zones of one page view. Every tag of a page sends the same
 * `pid`; what was served under a pid is remembered for a few minutes, so a later zone of the page skips
 * ad items (unique delivery) and follows the campaign a roadblock already started. The page's requests
 * may reach different serving replicas, so with Redis the memory is shared (one round trip, on requests
 * that carry a pid only); without it each replica remembers its own pages.
 */
import type Redis from 'ioredis';

export interface PageMemory {
  /** Ad items and campaigns already served on the page. */
  served(account: number, pid: string): Promise<{ adItems: Set<number>; campaigns: Set<number> }>;
  remember(account: number, pid: string, adItem: number, campaign: number): Promise<void>;
}

const PAGE_TTL_SECONDS = 300;

export class RedisPageMemory implements PageMemory {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(account: number, pid: string): string {
    return `${this.prefix}page:${account}:${pid.slice(0, 64)}`;
  }

  async served(account: number, pid: string) {
    const members = await this.redis.smembers(this.key(account, pid));
    return split(members);
  }

  async remember(account: number, pid: string, adItem: number, campaign: number) {
    const key = this.key(account, pid);
    await this.redis.multi().sadd(key, `a${adItem}`, `c${campaign}`).expire(key, PAGE_TTL_SECONDS).exec();
  }
}

export class LocalPageMemory implements PageMemory {
  private readonly pages = new Map<string, { members: Set<string>; until: number }>();

  async served(account: number, pid: string) {
    const page = this.pages.get(`${account}:${pid}`);
    return split(page && page.until > Date.now() ? [...page.members] : []);
  }

  async remember(account: number, pid: string, adItem: number, campaign: number) {
    const key = `${account}:${pid}`;
    let page = this.pages.get(key);
    if (!page || page.until <= Date.now()) {
      page = { members: new Set(), until: Date.now() + PAGE_TTL_SECONDS * 1000 };
      this.pages.set(key, page);
    }
    page.members.add(`a${adItem}`).add(`c${campaign}`);
    // Bounded: the oldest pages go first.
    if (this.pages.size > 50_000) this.pages.delete(this.pages.keys().next().value!);
  }
}

function split(members: string[]) {
  const adItems = new Set<number>();
  const campaigns = new Set<number>();
  for (const m of members) (m[0] === 'a' ? adItems : campaigns).add(Number(m.slice(1)));
  return { adItems, campaigns };
}
