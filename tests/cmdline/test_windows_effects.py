"""Windows spellings of effects the other readers know (cmdline/effects/windows.py), in spellings of
our own beside the everyday command that reads the same state."""

from __future__ import annotations

import pytest
from dsh_policy.cmdline.effects import shell_acts


def kinds(line: str) -> set[str]:
    return {effect["kind"] for effect in shell_acts(line)}


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("Set-MpPreference -DisableIOAVProtection $true", "defense-off"),
        ("set-mppreference -DisableBehaviorMonitoring 1", "defense-off"),
        ("Add-MpPreference -ExclusionProcess node.exe", "defense-off"),
        ("bcdedit.exe /set {default} bootstatuspolicy ignoreallfailures", "defense-off"),
        ("wevtutil.exe clear-log System", "log-off"),
        ("Clear-EventLog -LogName Application", "log-off"),
        (
            r"reg add HKCU\\Software\\Microsoft\\Windows\\CurrentVersion\\RunOnce /v u /d C:\\u.exe",
            "persistence",
        ),
        (
            r"Set-ItemProperty -Path 'HKLM:\Software\Microsoft\Windows\CurrentVersion\Run' -Name u -Value x",
            "persistence",
        ),
        ("schtasks /Create /SC ONLOGON /TN updater /TR C:/Users/dev/u.exe", "persistence"),
        ("sc.exe create updater binPath= C:/Users/dev/u.exe start= auto", "persistence"),
        ("net user helpdesk Winter2026! /add", "account"),
        ("net localgroup Administrators helpdesk /add", "account"),
        ("Add-LocalGroupMember -Group Administrators -Member helpdesk", "account"),
        ("vssadmin.exe Delete Shadows /All /Quiet", "erase-contents"),
        ("wmic shadowcopy delete", "erase-contents"),
        ("wbadmin delete catalog -quiet", "erase-contents"),
        ("format E: /FS:NTFS /Q /Y", "erase-contents"),
        ("Clear-Disk -Number 2 -RemoveData -Confirm:$false", "erase-contents"),
        (r"reg save HKLM\\SYSTEM C:\\Temp\\s.hiv", "secret-store"),
        ("procdump64.exe -accepteula -ma lsass.exe out.dmp", "memory-access"),
        ("Restart-Computer -Force", "break-system"),
        # credential files under a Windows home, after the POSIX reading ate the backslashes
        (r"type %USERPROFILE%\.aws\credentials", "secret-store"),
        (r"Get-Content $env:USERPROFILE\.ssh\id_ed25519", "secret-store"),
        (r"gc $HOME\.git-credentials", "secret-store"),
        (
            r'Copy-Item "$env:LOCALAPPDATA\Google\Chrome\User Data\Default\Login Data" C:\Temp\x',
            "secret-store",
        ),
        # protections and start-up files
        ("Set-NetFirewallProfile -Profile Public -Enabled False", "defense-off"),
        ("taskkill /F /IM MsMpEng.exe", "defense-off"),
        ("Stop-Process -Name MsSense -Force", "defense-off"),
        ("Add-Content $PROFILE 'Set-Alias ls C:/Users/dev/x.exe'", "persistence"),
    ],
)
def test_each_spelling_reads_as_its_effect(line: str, kind: str) -> None:
    assert kind in kinds(line), (line, shell_acts(line))


@pytest.mark.parametrize(
    "line",
    [
        "Get-MpPreference",
        "Set-MpPreference -DisableRealtimeMonitoring $false",
        "Get-MpComputerStatus",
        r"reg query HKCU\\Software\\Microsoft\\Windows\\CurrentVersion\\Run",
        r"reg add HKCU\\Software\\Acme\\Editor /v Theme /d dark",
        "schtasks /query /fo LIST",
        "sc query WinDefend",
        "net user",
        "net localgroup Administrators",
        "Get-LocalUser",
        "vssadmin list shadows",
        "wbadmin get versions",
        "wevtutil qe System /c:5",
        "Get-EventLog -LogName System -Newest 10",
        "format-table Name, Id",
        "Get-Disk",
        "reg export HKCU\\Software\\Acme acme.reg",
        "Get-Process | Sort-Object CPU -Descending",
        r"type %USERPROFILE%\.ssh\id_ed25519.pub",
        r"Get-Content .\README.md",
        r"type %USERPROFILE%\.aws\config",
        "Set-NetFirewallProfile -Profile Public -Enabled True",
        "taskkill /F /IM node.exe",
        "Stop-Process -Name devenv",
        "Add-Content notes.txt 'done'",
    ],
)
def test_the_everyday_command_has_none_of_them(line: str) -> None:
    found = kinds(line) & {"defense-off", "log-off", "persistence", "account", "erase-contents",
                            "secret-store", "memory-access", "break-system"}  # fmt: skip
    assert not found, (line, shell_acts(line))
