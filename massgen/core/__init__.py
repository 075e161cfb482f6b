"""Value types, events and errors. No I/O and no third-party SDKs live here."""
