"""The readers added for the classes a twenty-third blind probe (tests/corpus/probe23) found unread,
each in spellings of our own with its nearest everyday look-alike (none is a corpus entry): macOS
controls switched off through the commands mSCP checks them with (the unified log's level, update
schedules, kernel and system extensions, the packet filter, screen lock, guest and root accounts,
password policy, FileVault users, hidden files, configuration profiles), security preferences and
launchd plists written with defaults/PlistBuddy/plutil, AppleScript and JXA that adds login items,
asks for passwords or reads Notes and Mail, the stealers' wallet and user-record stores, and
Spotlight hunts for recovery words; and the Mac developer's look-alikes that must stay quiet (a CI
build keychain, one app's privacy reset, a cache left out of backups, an interactive screenshot)."""

from __future__ import annotations

import pytest
from dsh_policy.cmdline.effects import shell_acts


def kinds(line: str) -> set[str]:
    return {effect["kind"] for effect in shell_acts(line)}


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        # the unified log silenced, updates unscheduled, extensions and filters removed
        ("sudo log config --subsystem com.apple.TCC --mode persist:off", "log-off"),
        ("log config --mode 'level: off'", "log-off"),
        ("sudo softwareupdate --schedule=off", "defense-off"),
        ("sudo spctl kext-consent add ABCDE12345", "defense-off"),
        ("systemextensionsctl developer on", "defense-off"),
        ("sudo systemextensionsctl reset", "defense-off"),
        ("sudo kmutil unload -b com.crowdstrike.sensor", "defense-off"),
        ("sudo pfctl -Fa", "defense-off"),
        # accounts and locks
        ("sudo sysadminctl -autologin set -userName dev -password x", "defense-off"),
        ("sysadminctl -guestAccount on", "account"),
        ("sudo pwpolicy -clearglobalpolicy", "account"),
        ("dsenableroot -u admin -p pw -r rootpw", "account"),
        ("sudo fdesetup add -usertoadd helper -verbose", "account"),
        ("SetFile -a VE ~/Library/.helper", "defense-off"),
        ("sudo profiles -R -p com.corp.security.baseline", "defense-off"),
        # security preferences
        ("defaults -currentHost write com.apple.screensaver askForPasswordDelay -int 3600", "defense-off"),
        ("sudo defaults write com.apple.loginwindow autoLoginUser -string kiosk", "defense-off"),
        ("sudo defaults write /Library/Preferences/com.apple.loginwindow GuestEnabled -int 1", "account"),
        ("sudo defaults write /var/db/SystemPolicy-prefs enabled -string NO", "defense-off"),
        # launchd plists changed in place, folder actions, the Dock
        ("defaults write /Library/LaunchDaemons/org.example.helper Program /var/tmp/h", "persistence"),
        (
            "/usr/libexec/PlistBuddy -c 'Add :RunAtLoad bool true' ~/Library/LaunchAgents/org.x.plist",
            "persistence",
        ),
        ("plutil -insert KeepAlive -bool YES /Library/LaunchAgents/org.x.plist", "persistence"),
        ("defaults write com.apple.FolderActionsDispatcher folderActionsEnabled -bool YES", "persistence"),
        (
            "defaults write com.apple.dock persistent-apps -array-add '<dict><key>tile-data</key><dict>"
            "<key>file-data</key><dict><key>_CFURLString</key><string>/private/var/tmp/Safari.app</string>"
            "</dict></dict></dict>'",
            "persistence",
        ),
        # AppleScript and JXA
        (
            "osascript -l JavaScript -e "
            '\'app.displayDialog("Password", {hiddenAnswer: true, defaultAnswer: ""})\'',
            "secret-hunt",
        ),
        (
            "osascript -l JavaScript -e 'se.loginItems.push(se.LoginItem({path: \"/var/tmp/A.app\"}))'",
            "persistence",
        ),
        (
            'osascript -e \'tell application "Notes" to get plaintext of notes of folder "Notes"\'',
            "secret-store",
        ),
        (
            "osascript -e 'tell application \"Contacts\" to get value of emails of every person'",
            "secret-store",
        ),
        ('osascript -e \'tell app "Mail" to get source of messages of mailbox "INBOX"\'', "secret-store"),
        # stores: the local user records, wallets, a keychain folder packed by -C
        ("sudo cat /private/var/db/dslocal/nodes/Default/users/root.plist", "secret-store"),
        ("cp -r ~/Library/Application\\ Support/Guarda /var/tmp/g", "secret-store"),
        ("tar cf /var/tmp/k.tar --directory /Users/dev/Library Keychains", "secret-store"),
        ("mdfind 'recovery phrase'", "secret-hunt"),
        # the login keychain's ACLs opened, whatever the spelling of its path
        (
            "security set-key-partition-list -S apple: -s -k pw "
            "/Users/dev/Library/Keychains/login.keychain-db",
            "keychain",
        ),
    ],
)
def test_the_technique_is_read(line: str, kind: str) -> None:
    assert kind in kinds(line), shell_acts(line)


@pytest.mark.parametrize(
    "line",
    [
        "log show --last 2h --predicate 'subsystem == \"com.example.app\"'",
        "log config --status",
        "softwareupdate --list --all",
        "systemextensionsctl list",
        "sudo pfctl -s rules",
        "sysadminctl -guestAccount status",
        "sudo sysadminctl -screenLock status",
        "pwpolicy -u dev -getaccountpolicies",
        "dsenableroot -d",
        "fdesetup list",
        "SetFile -a v ~/Documents/readme.txt",
        "profiles show -type enrollment",
        "defaults write com.apple.screensaver askForPassword -int 1",
        "defaults write com.apple.loginwindow GuestEnabled -bool false",
        "defaults write com.apple.dock persistent-apps -array-add '<dict><key>tile-data</key><dict>"
        "<key>file-data</key><dict><key>_CFURLString</key><string>/Applications/Xcode.app</string>"
        "</dict></dict></dict>'",
        "/usr/libexec/PlistBuddy -c 'Print :Label' ~/Library/LaunchAgents/homebrew.mxcl.redis.plist",
        "plutil -lint ~/Library/LaunchAgents/homebrew.mxcl.redis.plist",
        "plutil -replace CFBundleVersion -string 9 ./App/Info.plist",
        "osascript -e 'tell application \"System Events\" to get name of every login item'",
        "osascript -e 'tell application \"Notes\" to activate'",
        'osascript -l JavaScript -e \'app.displayDialog("Ship it?", {buttons: ["No", "Yes"]})\'',
        "mdfind -name Package.swift",
        # a CI job's own build keychain, one app's privacy reset, a cache left out of backups
        'security create-keychain -p "$KC_PW" $RUNNER_TEMP/signing.keychain-db',
        "security set-key-partition-list -S apple-tool:,apple:,codesign: -s -k "
        '"$KC_PW" $RUNNER_TEMP/signing.keychain-db',
        "security delete-keychain $RUNNER_TEMP/signing.keychain-db",
        "security find-generic-password -s example-staging -a ci",
        "tccutil reset Microphone org.example.Recorder",
        "tmutil addexclusion ~/Library/Caches/org.example.build",
        "screencapture -iW ~/Desktop/window.png",
    ],
)
def test_the_look_alike_is_quiet(line: str) -> None:
    found = kinds(line) & {
        "defense-off",
        "log-off",
        "account",
        "persistence",
        "secret-store",
        "secret-hunt",
        "keychain",
        "input-capture",
    }
    assert not found, shell_acts(line)


@pytest.mark.parametrize(
    "line",
    [
        "tccutil reset Accessibility",
        "tmutil addexclusion -p /Users/dev",
        "security delete-keychain login.keychain",
    ],
)
def test_the_wide_forms_stay_read(line: str) -> None:
    assert kinds(line) & {"defense-off", "keychain"}, shell_acts(line)
