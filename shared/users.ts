// User administration (spec sections 3 "User (administration)", 5 "User form", 7 "Users"): the
// schemas the form and the server both validate with, and the shapes the server answers.
import { z } from "zod";
import { idSchema, int } from "./input.ts";

/** Spec section 9: username minimum 3, password minimum 6 characters. */
export const USERNAME_MIN = 3;
export const PASSWORD_MIN = 6;

export const USER_MESSAGES = {
  usernameShort: "Username must be at least 3 characters",
  emailInvalid: "Please enter a valid email",
  passwordShort: "Password must be at least 6 characters",
  passwordRequired: "Password is required for new users",
} as const;

/** The form's own fields, shared with the server (which adds permissions and the chat user). */
export const UserFieldsSchema = z.object({
  username: z.string().trim().min(USERNAME_MIN, USER_MESSAGES.usernameShort).max(100, "Username is too long"),
  /** Valid or empty; empty is stored as no e-mail. */
  email: z
    .union([z.literal(""), z.email(USER_MESSAGES.emailInvalid).max(254, USER_MESSAGES.emailInvalid)])
    .nullish(),
  /** Write only. Empty on edit keeps the current password. */
  password: z
    .union([z.literal(""), z.string().min(PASSWORD_MIN, USER_MESSAGES.passwordShort).max(1000)])
    .nullish(),
  is_admin: z.boolean().default(false),
  is_active: z.boolean().default(true),
});

/** Permission ids (numbers or numeric text) or codes; the server answers codes. */
export const PermissionRefSchema = z.union([int({ min: 1, coerce: false }), z.string().min(1).max(100)], {
  error: "must be a permission id (a whole number from 1 to 2147483647) or a permission code",
});

const userWriteShape = {
  ...UserFieldsSchema.shape,
  /** The linked chat user (chat_users.id); absent or null for none. */
  rocket_chat_user_id: int({ min: 1, coerce: false }).nullish(),
  permissions: z.array(PermissionRefSchema).max(500).default([]),
};

export const CreateUserInputSchema = z.object(userWriteShape).superRefine((v, ctx) => {
  if (!v.password)
    ctx.addIssue({ code: "custom", path: ["password"], message: USER_MESSAGES.passwordRequired });
});
export type CreateUserInput = z.input<typeof CreateUserInputSchema>;

/** PUT: the same body plus id (which must match the path when given). */
export const UpdateUserInputSchema = z.object({
  ...userWriteShape,
  id: int({ min: 1, coerce: false }).optional(),
});
export type UpdateUserInput = z.input<typeof UpdateUserInputSchema>;

export const UserIdSchema = z.object({ id: idSchema });

/** A user as the administration screens see it; permissions are codes. */
export interface AdminUser {
  id: number;
  username: string;
  email: string | null;
  is_admin: boolean;
  is_active: boolean;
  last_login: Date | null;
  rocket_chat_user_id: number | null;
  permissions: string[];
  created_at: Date;
  updated_at: Date;
}

/** Spec section 3 "Chat user". */
export interface ChatUser {
  id: number;
  mongo_id: string;
  name: string | null;
  username: string;
  active: boolean;
}
