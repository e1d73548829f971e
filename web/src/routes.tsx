/**
 * Every page of the app: its path, its place in the navigation, and the area module that draws it
 * (loaded when first opened, so the first load carries only the shell). An area owns its folder
 * under areas/ and its sub-paths.
 */
import { lazy, type ComponentType, type LazyExoticComponent } from 'react';
import type { common } from './i18n/common';

type NavLabel = keyof (typeof common)['en'];

export interface AreaRoute {
  /** The area's root path; the area handles paths below it (wouter `nest`). */
  path: string;
  label: NavLabel;
  admin: boolean;
  component: LazyExoticComponent<ComponentType>;
}

export const ROUTES: AreaRoute[] = [
  { path: '/chat', label: 'navChat', admin: false, component: lazy(() => import('./areas/chat/index')) },
  { path: '/presets', label: 'navPresets', admin: false, component: lazy(() => import('./areas/presets/index')) },
  { path: '/keys', label: 'navKeys', admin: false, component: lazy(() => import('./areas/keys/index')) },
  { path: '/usage', label: 'navUsage', admin: false, component: lazy(() => import('./areas/usage/index')) },
  { path: '/account', label: 'navAccount', admin: false, component: lazy(() => import('./areas/account/index')) },
  { path: '/admin/dashboard', label: 'navDashboard', admin: true, component: lazy(() => import('./areas/admin-dashboard/index')) },
  { path: '/admin/channels', label: 'navChannels', admin: true, component: lazy(() => import('./areas/admin-channels/index')) },
  { path: '/admin/users', label: 'navUsers', admin: true, component: lazy(() => import('./areas/admin-users/index')) },
  { path: '/admin/settings', label: 'navSettings', admin: true, component: lazy(() => import('./areas/admin-settings/index')) },
  { path: '/admin/billing', label: 'navBilling', admin: true, component: lazy(() => import('./areas/admin-billing/index')) },
  { path: '/admin/logs', label: 'navLogs', admin: true, component: lazy(() => import('./areas/admin-logs/index')) },
  { path: '/admin/alerts', label: 'navAlerts', admin: true, component: lazy(() => import('./areas/admin-alerts/index')) },
];
