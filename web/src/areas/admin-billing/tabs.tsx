/** Sub-page links of an admin area (a nav of links: keyboard and screen readers know them). Shared by the admin ops areas. */
import { Link, useLocation } from 'wouter';
import './ops.css';

export function Tabs({ label, tabs }: { label: string; tabs: Array<{ href: string; label: string }> }) {
  const [location] = useLocation();
  const active = (href: string) => (href === '/' ? location === '/' || location === '' : location === href || location.startsWith(`${href}/`));
  return (
    <nav className="tabs" aria-label={label}>
      {tabs.map((tab) => (
        <Link key={tab.href} href={tab.href} className={active(tab.href) ? 'active' : ''} aria-current={active(tab.href) ? 'page' : undefined}>
          {tab.label}
        </Link>
      ))}
    </nav>
  );
}

/** Asks before a destructive action (the browser's own dialog: keyboard-usable, labelled). */
export const confirmed = (question: string): boolean => window.confirm(question);
