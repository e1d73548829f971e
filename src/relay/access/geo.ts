/**
 * Country of a client, for API keys' country rules. Two sources, chosen by configuration:
 * - GEOIP_DATABASE: a MaxMind GeoLite2/GeoIP2 Country (or City) .mmdb file the operator supplies
 *   (read with the `maxmind` package; nothing is downloaded);
 * - GEOIP_COUNTRY_HEADER: a country header set by a CDN in front (e.g. `cf-ipcountry`), believed
 *   only on requests that arrive through a TRUSTED_PROXIES address.
 * The database wins when both are configured. Unknown country = null.
 */
import type { HttpRequestLike } from '../../http-exchange.js';
import maxmind, { type CountryResponse, type Reader } from 'maxmind';

export class GeoLocator {
  private constructor(
    private readonly reader: Reader<CountryResponse> | null,
    private readonly header: string | null,
  ) {}

  static async open(database: string | null, header: string | null): Promise<GeoLocator> {
    return new GeoLocator(database ? await maxmind.open<CountryResponse>(database) : null, header);
  }

  get configured(): boolean {
    return this.reader !== null || this.header !== null;
  }

  country(request: HttpRequestLike, ip: string, viaTrustedProxy: boolean): string | null {
    if (this.reader) {
      const code = this.reader.get(ip)?.country?.iso_code;
      if (code) return code.toUpperCase();
    }
    if (this.header && viaTrustedProxy) {
// eslint-disable-next-line switchyard/no-string-index-lookup -- the header name is configuration (GEOIP_HEADER), not the caller's
      const value = request.headers[this.header];
      const code = Array.isArray(value) ? value[0] : value;
      if (code && /^[A-Za-z]{2}$/.test(code)) return code.toUpperCase();
    }
    return null;
  }
}
