/**
 * The client's address: the socket peer, unless that peer is a trusted proxy, in which case
 * X-Forwarded-For is walked from the right, skipping trusted hops. An untrusted peer cannot
 * spoof its address with the header.
 */
import type { HttpRequestLike } from '../../http-exchange.js';
import { inRuleSet, parseAddress, type IpRuleSet } from './ip-rules.js';

function trusted(ip: string, proxies: IpRuleSet): boolean {
  const address = parseAddress(ip);
  return !!address && inRuleSet(proxies, address);
}

export function clientIp(request: HttpRequestLike, proxies: IpRuleSet): { ip: string; viaTrustedProxy: boolean } {
  const peer = request.socket.remoteAddress ?? '';
  if (proxies.size === 0 || !trusted(peer, proxies)) return { ip: peer, viaTrustedProxy: false };
  const header = request.headers['x-forwarded-for'];
  const hops = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',').map((h) => h.trim()).filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    if (!trusted(hops[i]!, proxies)) return { ip: hops[i]!, viaTrustedProxy: true };
  }
  return { ip: hops[0] ?? peer, viaTrustedProxy: true };
}
