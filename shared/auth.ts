import { z } from "zod";

export const LoginInputSchema = z.object({
  username: z.string().trim().min(1, "username is required").max(200),
  password: z.string().min(1, "password is required").max(1000),
});
export type LoginInput = z.infer<typeof LoginInputSchema>;

/** The current user of spec section 3. */
export const CurrentUserSchema = z.object({
  id: z.number().int(),
  username: z.string(),
  email: z.string().nullable().optional(),
  is_admin: z.boolean(),
  permissions: z.array(z.string()),
  rocket_chat_user_id: z.number().int().nullable(),
});
export type CurrentUser = z.infer<typeof CurrentUserSchema>;

export interface LoginResponse {
  token: string;
  user: CurrentUser;
}

export const SESSION_COOKIE = "bo_session";
export const TOKEN_STORAGE_KEY = "token";
export const SESSION_FLAG_KEY = "isLoggedIn";
