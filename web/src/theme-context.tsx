import { createContext, useContext } from 'react';
import type { Theme } from './api/types';

export const ThemeContext = createContext<{ theme: Theme; setTheme(theme: Theme): void }>({ theme: 'system', setTheme: () => {} });
export const useTheme = () => useContext(ThemeContext);
